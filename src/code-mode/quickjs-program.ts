/**
 * One run_code program in a fresh QuickJS runtime + context (sandbox thread side). The engine is a
 * WebAssembly module: the program reaches nothing but the four host callbacks the prelude wraps,
 * and those accept strings only (JSON for tool arguments and results), so no host object, prototype
 * or constructor ever enters the engine and nothing of the engine's reaches the host.
 *
 * Limits: the interrupt handler ends a program that runs `busyMs` in one go (time spent awaiting a
 * tool call does not count), passes its wall deadline or is asked to stop; memory and stack are the
 * engine's (the runtime limits, plus the capped WebAssembly memory set up in sandbox-thread.ts);
 * output and tool calls are counted here. Every limit ends the program with its name.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten';
import type { CodeCallReply } from '../wire/protocol.js';
import { newEngineString } from './engine-string.js';
import { limitMessage } from './limits.js';
import { formatEncodedLog } from './log-format.js';
import { engineMemoryPages, type Realm, type RealmHost, WASM_PAGE } from './quickjs-realm.js';
import type { EngineSpec, LimitName, ProgramEnd, ProgramLimits, ToolCallOut } from './sandbox-protocol.js';

export interface ProgramIo {
  log(line: string): void;
  /** The calls made in a stretch of running, and the replies taken since the last report. */
  calls(calls: ToolCallOut[], taken: number): void;
  end(end: ProgramEnd): void;
  /** Marks the engine running (Date.now()) or idle (0) for the driver's backstop. */
  running(since: number): void;
  stopRequested(): boolean;
}

type Outcome =
  | { ok: true; text: string | undefined }
  | { ok: false; message: string; limit?: LimitName; aborted?: boolean };

const MAX_NAME_LENGTH = 1024;
/** What a string handed to the engine as it is must not hold (see answer). */
const NOT_C_STRING_SAFE = /[\0\uD800-\uDFFF]/;
export class QuickJSProgram implements RealmHost {
  private readonly runtime: QuickJSRuntime;
  private readonly vm: QuickJSContext;
  /** Ids of the tool calls whose answer the program still waits for. */
  private readonly pending = new Set<number>();
  /**
   * Calls made in the running segment, sent together when it ends, unless the segment ended the
   * program: a program that starts a thousand calls and trips a limit on the next one sends none.
   */
  private outbox: ToolCallOut[] = [];
  /** Replies received since the last report: the driver sends at most maxParallelToolCalls not taken. */
  private taken = 0;
  private readonly wallDeadline: number;
  private readonly wallTimer: NodeJS.Timeout;
  private segmentStart = 0;
  private nextId = 0;
  private outputBytes = 0;
  private stop: Outcome | undefined;
  private outcome: Outcome | undefined;
  private damaged = false;
  private ended = false;

  constructor(
    private readonly engine: QuickJSWASMModule,
    private readonly realm: Realm,
    private readonly spec: EngineSpec,
    private readonly limits: ProgramLimits,
    private readonly io: ProgramIo,
  ) {
    this.wallDeadline = Date.now() + limits.wallMs;
    this.wallTimer = setTimeout(
      () => this.halt({ ok: false, limit: 'wall', message: this.message('wall') }),
      limits.wallMs,
    );
    this.runtime = realm.runtime;
    this.vm = realm.vm;
    realm.bind(this);
  }

  start(code: string): void {
    this.enter(() => {
      const source = newEngineString(this.vm, code);
      const result = this.vm.callFunction(this.realm.run, this.vm.undefined, source);
      source.dispose();
      (result.error ?? result.value).dispose();
    });
  }

  /** A tool call's answer from the driver: resolve or reject the engine-side promise, then run. */
  reply(id: number, answer: CodeCallReply): void {
    this.taken += 1;
    if (!this.pending.delete(id) || this.ended) return;
    this.enter(() => this.answer(id, answer));
  }

  /** Resolves with the string itself or the value the JSON encodes, or rejects with the message. */
  private answer(id: number, answer: CodeCallReply): void {
    if (!answer.ok) {
      this.settle(id, false, answer.message);
      return;
    }
    // The engine takes a host string as a UTF-8 C string: one holding a NUL or a surrogate goes as JSON.
    const asText = 'text' in answer && !NOT_C_STRING_SAFE.test(answer.text);
    const payload = 'json' in answer ? answer.json : asText ? answer.text : JSON.stringify(answer.text);
    if (payload.length > this.spec.memoryMb * 1024 * 1024) {
      const message = `the tool result (${payload.length} bytes) does not fit the sandbox memory limit (codeResourceLimits.memoryMb)`;
      this.settle(id, false, message);
    } else {
      this.settle(id, true, payload, asText);
    }
  }

  /** The driver cancelled the call (aborted); a running engine also sees the shared stop cell. */
  cancel(): void {
    this.halt({ ok: false, aborted: true, message: 'run_code was cancelled' });
  }

  /** `text`: the payload is the result itself (a string), not JSON to parse. */
  private settle(id: number, ok: boolean, payload: string, text = false): void {
    const payloadHandle = newEngineString(this.vm, payload);
    const idHandle = this.vm.newNumber(id);
    const result = this.vm.callFunction(
      this.realm.settle,
      this.vm.undefined,
      idHandle,
      ok ? this.vm.true : this.vm.false,
      payloadHandle,
      text ? this.vm.true : this.vm.false,
    );
    idHandle.dispose();
    payloadHandle.dispose();
    (result.error ?? result.value).dispose();
  }

  /** Every entry into the engine: time it, run the jobs it queued, then see whether the program is over. */
  private enter(work: () => void): void {
    this.segmentStart = Date.now();
    this.io.running(this.segmentStart);
    try {
      work();
      this.drainJobs();
    } catch (error) {
      this.engineFault(error);
    } finally {
      this.io.running(0);
    }
    this.afterSegment();
  }

  private drainJobs(): void {
    while (this.stop === undefined && this.runtime.hasPendingJob()) {
      const result = this.runtime.executePendingJobs();
      if (result.error) {
        // An error that escapes a job is the engine's own (the prelude catches the program's).
        const limit = this.classify(this.vm.dump(result.error));
        result.error.dispose();
        if (limit) this.stop ??= { ok: false, limit, message: this.message(limit) };
      }
    }
  }

  private afterSegment(): void {
    const calls = this.outbox;
    this.outbox = [];
    if (this.ended) return;
    const outcome = this.stop ?? this.outcome;
    if (outcome !== undefined) {
      this.finish(outcome);
      return;
    }
    const taken = this.taken;
    this.taken = 0;
    if (calls.length > 0 || taken > 0) this.io.calls(calls, taken);
    if (this.pending.size === 0)
      this.finish({
        ok: false,
        message: 'run_code ended without a result: it awaited a promise that can never settle',
      });
  }

  shouldInterrupt(): boolean {
    if (this.stop !== undefined) return true;
    const now = Date.now();
    if (now - this.segmentStart > this.limits.busyMs)
      this.stop = { ok: false, limit: 'busy', message: this.message('busy') };
    else if (now > this.wallDeadline) this.stop = { ok: false, limit: 'wall', message: this.message('wall') };
    else if (this.io.stopRequested()) this.stop = { ok: false, aborted: true, message: 'run_code was cancelled' };
    return this.stop !== undefined;
  }

  /** Ends a program from outside the engine (wall timer while awaiting, cancellation). */
  private halt(outcome: Outcome): void {
    if (this.ended) return;
    this.stop ??= outcome;
    this.finish(this.stop);
  }

  onCall(nameHandle: QuickJSHandle, argsHandle: QuickJSHandle): QuickJSHandle {
    const name = this.text(nameHandle, MAX_NAME_LENGTH);
    const args = this.text(argsHandle, this.spec.memoryMb * 1024 * 1024);
    if (name === undefined || args === undefined)
      throw new TypeError('tools.<name>(args) takes JSON-serializable arguments');
    if (this.nextId >= this.limits.maxToolCalls) throw this.limitHit('toolCalls');
    const id = ++this.nextId;
    this.pending.add(id);
    this.outbox.push({ id, name, args });
    return this.vm.newNumber(id);
  }

  onLog(encodedHandle: QuickJSHandle): void {
    const encoded = this.text(encodedHandle, 2 * this.limits.maxOutputBytes + 65_536);
    if (encoded === undefined) throw this.limitHit('output');
    let line: string;
    try {
      line = formatEncodedLog(encoded);
    } catch {
      line = '[a console line that could not be formatted]';
    }
    this.countOutput(line);
    this.io.log(line);
  }

  onDone(textHandle: QuickJSHandle): void {
    if (this.vm.typeof(textHandle) === 'undefined') {
      this.outcome ??= { ok: true, text: undefined };
      return;
    }
    const text = this.text(textHandle, this.limits.maxOutputBytes);
    if (text === undefined) throw this.limitHit('output');
    this.countOutput(text);
    this.outcome ??= { ok: true, text };
  }

  onFail(kindHandle: QuickJSHandle, payloadHandle: QuickJSHandle, nameHandle: QuickJSHandle): void {
    const kind = this.text(kindHandle, 16);
    const payload = this.text(payloadHandle, 2 * this.limits.maxOutputBytes + 65_536);
    if (payload === undefined) throw this.limitHit('output');
    const message = kind === 'thrown' ? safeFormat(payload) : payload;
    const limit = kind === 'error' ? this.classify({ name: this.text(nameHandle, 64), message }) : undefined;
    this.outcome ??= limit ? { ok: false, limit, message: this.message(limit) } : { ok: false, message };
  }

  /** A host string from an engine handle, or undefined when it is not a string or too long to take. */
  private text(handle: QuickJSHandle, maxLength: number): string | undefined {
    if (this.vm.typeof(handle) !== 'string') return undefined;
    // A string primitive's own length (no getter can intervene) decides before anything is copied out.
    const lengthHandle = this.vm.getProp(handle, 'length');
    const length = this.vm.getNumber(lengthHandle);
    lengthHandle.dispose();
    return length > maxLength ? undefined : this.vm.getString(handle);
  }

  private countOutput(text: string): void {
    this.outputBytes += Buffer.byteLength(text) + 1;
    if (this.outputBytes > this.limits.maxOutputBytes + 1) throw this.limitHit('output');
  }

  /** Records the limit (the interrupt handler then refuses to run anything more) and returns the error to throw. */
  private limitHit(limit: LimitName): Error {
    this.stop ??= { ok: false, limit, message: this.message(limit) };
    return new RangeError(this.stop.ok ? limit : this.stop.message);
  }

  /** The engine's own out-of-memory and stack errors name their limit. */
  private classify(error: unknown): LimitName | undefined {
    const { message } = (typeof error === 'object' && error !== null ? error : {}) as { message?: unknown };
    if (message === 'out of memory') return 'memory';
    // JSON.parse reports its own overflow as a SyntaxError, the interpreter as an InternalError.
    if (message === 'stack overflow') return 'stack';
    return undefined;
  }

  /** A host exception thrown through the engine (a trap, the thread's own stack): the engine is not trusted again. */
  private engineFault(error: unknown): void {
    this.damaged = true;
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const limit: LimitName | undefined = /call stack/i.test(text)
      ? 'stack'
      : /memory|OOM|enlarge/i.test(text)
        ? 'memory'
        : undefined;
    this.stop ??= limit
      ? { ok: false, limit, message: this.message(limit) }
      : { ok: false, message: `run_code engine failed: ${text}` };
  }

  private message(limit: LimitName): string {
    return limitMessage(limit, { ...this.spec, ...this.limits });
  }

  private finish(outcome: Outcome): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.wallTimer);
    // WebAssembly memory never shrinks: an engine that grew close to its cap is not reused, and a
    // failure there is the memory limit, whatever the engine threw (QuickJS throws `null` when it
    // cannot even allocate the error).
    const exhausted =
      this.engine.getWasmMemory().buffer.byteLength >= engineMemoryPages(this.spec.memoryMb).maximum * WASM_PAGE * 0.9;
    const named: Outcome =
      !outcome.ok && outcome.limit === undefined && !outcome.aborted && exhausted
        ? { ok: false, limit: 'memory', message: this.message('memory') }
        : outcome;
    const reusable = !this.damaged && !exhausted && this.realm.dispose();
    this.io.end({ type: 'end', ...named, reusable });
  }
}

function safeFormat(encoded: string): string {
  try {
    return formatEncodedLog(encoded);
  } catch {
    return '[a thrown value that could not be formatted]';
  }
}
