/**
 * run_code (SPEC §4 rule 8): model-written JavaScript runs in a QuickJS
 * engine compiled to WebAssembly, on a sandbox thread of its own (sandbox-pool.ts), so it reaches
 * only `tools`, `console` and the ECMAScript built-ins, and a busy program never stalls the
 * driver's thread. Sub-calls go to the parent resolver as the same agent with ids
 * `<callId>:code:<n>`; the parent keys them by a program id drawn here (a model may reuse a call id,
 * it cannot pick this) and bounds them (src/agents/code-calls.ts). When the program ends, for
 * whatever reason, the parent is told, so it aborts the calls still outstanding and drops their
 * results. The sandbox thread enforces every limit itself; this side keeps two backstops that end
 * the thread when the engine is stuck in code that does not poll its interrupt handler (a deep
 * JSON.stringify, for instance). A limit is an errored result that keeps the logs, never a driver
 * fault.
 */
import { AsyncResource } from 'node:async_hooks';
import { errorMessage } from '../errors.js';
import type { ToolCallRecord } from '../models/types.js';
import type { ToolResult } from '../types.js';
import { Fifo } from '../util/fifo.js';
import { isObj } from '../util/hand-checks.js';
import type { DriverGateway } from '../wire/gateway.js';
import type { CodeCallReply, DriverPlan } from '../wire/protocol.js';
import { limitMessage } from './limits.js';
import type { SandboxPool, SandboxThread, ThreadListener } from './sandbox-pool.js';
import type { FromSandbox, LimitName, ProgramEnd, ToolCallOut, ToSandbox } from './sandbox-protocol.js';

/** How long past a limit the engine may stay unresponsive before its thread is ended. */
const BACKSTOP_GRACE_MS = 2_000;
/** After a cancellation, how long a program may take to let go of its thread before it is ended. */
const STOP_GRACE_MS = 1_000;

export type CodeRunner = (call: ToolCallRecord, signal: AbortSignal) => Promise<ToolResult>;
type CodePlan = Pick<DriverPlan, 'codeBusyTimeoutMs' | 'codeWallTimeoutMs' | 'codeLimits' | 'maxParallelToolCalls'>;

/** A tool call the program made, with its sub-call id. */
interface SubCall extends ToolCallOut {
  callId: string;
}

/** The model's run_code arguments, or undefined when they are not `{ description, code }` JSON. */
function runCodeArgsOf(text: string): { description: string; code: string } | undefined {
  try {
    const args: unknown = JSON.parse(text);
    if (!isObj(args) || typeof args.description !== 'string' || typeof args.code !== 'string') return undefined;
    return { description: args.description, code: args.code };
  } catch {
    return undefined;
  }
}

export function codeRunner(plan: CodePlan, host: DriverGateway, pool: SandboxPool): CodeRunner {
  return (call, signal) => {
    const args = runCodeArgsOf(call.arguments);
    if (args === undefined) {
      return Promise.resolve(
        failure('INVALID_ARGS', 'run_code needs { description: string, code: string } as JSON arguments', []),
      );
    }
    return new CodeRun(call.callId, args.code, plan, host, signal, pool).result;
  };
}

class CodeRun implements ThreadListener {
  readonly result: Promise<ToolResult>;
  private readonly logs: string[] = [];
  private thread: SandboxThread | undefined;
  private subCalls = 0;
  // The Web Crypto global loads node:crypto on first use (~3 ms of a pool thread's boot when imported).
  private readonly program = globalThis.crypto.randomUUID();
  /** Sub-calls sent to the parent whose reply the program has not taken yet. */
  private inFlight = 0;
  /** Sub-calls made past the window (maxParallelToolCalls), sent as earlier ones are answered. */
  private readonly queued = new Fifo<SubCall>();
  private settle!: (result: ToolResult) => void;
  private settled = false;
  private wallBackstop: NodeJS.Timeout | undefined;
  private busyBackstop: NodeJS.Timeout | undefined;
  /** Bound to the activation that runs this program, whichever context the thread's events arrive in. */
  private readonly scope = new AsyncResource('brood.run-code');

  constructor(
    private readonly callId: string,
    code: string,
    private readonly plan: CodePlan,
    private readonly host: DriverGateway,
    private readonly signal: AbortSignal,
    private readonly pool: SandboxPool,
  ) {
    this.result = new Promise((resolve) => (this.settle = resolve));
    if (signal.aborted) {
      this.finish(failure('ABORTED', 'run_code was cancelled', this.logs));
      return;
    }
    signal.addEventListener('abort', this.onAbort, { once: true });
    void this.start(code);
  }

  private async start(code: string): Promise<void> {
    let thread: SandboxThread;
    try {
      thread = await this.pool.acquire({
        memoryMb: this.plan.codeLimits.memoryMb,
        stackKb: this.plan.codeLimits.stackKb,
      });
    } catch (error) {
      this.finish(failure(undefined, errorMessage(error), this.logs));
      return;
    }
    if (this.settled) {
      this.pool.release(thread);
      return;
    }
    this.thread = thread;
    thread.attach(this);
    const { codeBusyTimeoutMs: busyMs, codeWallTimeoutMs: wallMs, codeLimits } = this.plan;
    thread.post({
      type: 'run',
      code,
      limits: { busyMs, wallMs, maxOutputBytes: codeLimits.maxOutputBytes, maxToolCalls: codeLimits.maxToolCalls },
    });
    this.wallBackstop = setTimeout(() => this.backstop('wall'), wallMs + BACKSTOP_GRACE_MS);
    const every = Math.min(1_000, Math.max(50, busyMs / 2));
    this.busyBackstop = setInterval(() => this.checkBusy(), every);
  }

  readonly message = (message: FromSandbox): void => this.scope.runInAsyncScope(() => this.onMessage(message));

  readonly gone = (reason: string): void =>
    this.scope.runInAsyncScope(() => {
      this.thread = undefined;
      this.finish(failure(undefined, reason, this.logs));
    });

  private onMessage(message: FromSandbox): void {
    if (message.type === 'end') this.ended(message);
    else if (this.settled) return;
    else if (message.type === 'log') this.logs.push(message.line);
    else if (message.type === 'calls') this.called(message.calls, message.taken);
  }

  /** The program let go of its thread (also after a cancellation settled the result already). */
  private ended(end: ProgramEnd): void {
    const thread = this.thread;
    this.thread = undefined;
    if (thread) {
      if (end.reusable) this.pool.release(thread);
      else this.pool.retire(thread);
    }
    if (this.settled) return;
    if (end.ok) this.finish(success(this.logs, end.text));
    else if (end.aborted) this.finish(failure('ABORTED', end.message ?? 'run_code was cancelled', this.logs));
    else this.finish(failure(end.limit ? 'CODE_LIMIT' : undefined, end.message ?? 'run_code failed', this.logs));
  }

  /**
   * At most maxParallelToolCalls sub-calls are out at once, from the moment one is sent to the parent
   * until the program took its reply; the rest wait here. So results reach the sandbox no faster than
   * the program takes them (a program slow to parse 512 KB results had hundreds queued at its port,
   * and this thread, busy passing them on, missed its watchdog), and when the program ends the
   * parent hears of it right behind at most that many calls (it takes a thread's frames a few per
   * turn of its loop: a thousand calls sent at once took seconds to arrive, all the while it ran them).
   */
  private called(calls: readonly ToolCallOut[], taken: number): void {
    this.inFlight -= taken;
    for (const { id, name, args } of calls)
      this.queued.push({ id, callId: `${this.callId}:code:${++this.subCalls}`, name, args });
    while (this.inFlight < this.plan.maxParallelToolCalls) {
      const next = this.queued.take();
      if (next === undefined) return;
      void this.forward(next);
    }
  }

  /** A sub-call goes to the parent resolver as the same agent, host-style (not collapsed by Code Mode). */
  private async forward(sub: SubCall): Promise<void> {
    this.inFlight += 1; // until the program reports it took the reply
    let reply: CodeCallReply;
    try {
      const call = { program: this.program, callId: sub.callId, name: sub.name, arguments: sub.args };
      reply = await this.host.callFromCode(call);
    } catch (error) {
      reply = { ok: false, message: errorMessage(error) };
    }
    if (!this.settled) this.thread?.post(sandboxReply(sub.id, reply));
  }

  private checkBusy(): void {
    const since = this.thread?.engineRunningSince() ?? 0;
    if (since > 0 && Date.now() - since > this.plan.codeBusyTimeoutMs + BACKSTOP_GRACE_MS) this.backstop('busy');
  }

  /** The engine did not stop at a limit it was past: end its thread. */
  private backstop(limit: LimitName): void {
    const thread = this.thread;
    this.thread = undefined;
    if (thread) this.pool.retire(thread);
    const message = limitMessage(limit, { busyMs: this.plan.codeBusyTimeoutMs, wallMs: this.plan.codeWallTimeoutMs });
    this.finish(failure('CODE_LIMIT', message, this.logs));
  }

  private readonly onAbort = (): void => {
    const thread = this.thread;
    this.finish(failure('ABORTED', 'run_code was cancelled', this.logs));
    if (thread === undefined) return;
    // The thread goes back to the pool once the program let go of it (its `end`), or is ended.
    thread.requestStop();
    thread.post({ type: 'stop' });
    const ended = setTimeout(() => {
      if (this.thread === thread) {
        this.thread = undefined;
        this.pool.retire(thread);
      }
    }, STOP_GRACE_MS);
    ended.unref();
  };

  private finish(result: ToolResult): void {
    if (this.settled) return;
    this.settled = true;
    if (this.wallBackstop) clearTimeout(this.wallBackstop);
    if (this.busyBackstop) clearInterval(this.busyBackstop);
    this.signal.removeEventListener('abort', this.onAbort);
    this.queued.clear();
    // Sent after every call the program made (same link, in order): the parent closes its lane.
    if (this.subCalls > 0) void this.host.endProgram(this.program).catch(() => undefined);
    this.settle(result);
  }
}

function sandboxReply(id: number, reply: CodeCallReply): ToSandbox {
  if (!reply.ok) return { type: 'reply', id, ok: false, message: reply.message };
  return 'text' in reply
    ? { type: 'reply', id, ok: true, text: reply.text }
    : { type: 'reply', id, ok: true, json: reply.json };
}

function success(logs: string[], text: string | undefined): ToolResult {
  const parts = text === undefined ? logs : [...logs, text];
  return { isError: false, content: parts.join('\n') };
}

function failure(code: string | undefined, message: string, logs: string[]): ToolResult {
  const content = [`Error: ${message}`, ...logs].join('\n');
  return { isError: true, content, error: code === undefined ? { message } : { code, message } };
}
