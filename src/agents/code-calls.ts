/**
 * Calls from inside run_code programs, as the parent runs them (SPEC §4 rule 8). Each
 * program has an id its driver draws (never a model's call id) and a lane of its own here:
 *   - at most `maxParallelToolCalls` of its calls are in flight, and a tool that is not
 *     concurrencySafe runs alone, as in an assistant message (SPEC §7.2); calls start in the order
 *     they arrive, each classified right before it may start;
 *   - a result is encoded once, as the JSON the sandbox takes (a string result by the driver's
 *     thread), and one larger than `codeResourceLimits.maxOutputBytes` is refused here, before it
 *     crosses to the driver's thread;
 *   - when the program ends (its driver says so, or its turn or activation ends), every call it
 *     still has is answered at once, the running ones are aborted through the signal their tools
 *     got, and whatever those tools return later is dropped here;
 *   - nothing is kept once answered: a model that reuses a run_code call id in a later step gets the
 *     new program's own results, and a discarded large result is garbage at once.
 */
import { setMaxListeners } from 'node:events';
import { BroodError, errorMessage } from '../errors.js';
import type { ToolResult } from '../types.js';
import { Fifo } from '../util/fifo.js';
import type { CodeCallReply, CodeCallWire, ConcurrencyClass } from '../wire/protocol.js';
import { codeCallRequest, programId } from '../wire/protocol.js';
import { classOf, type GatewayAgent } from './parent-tools.js';
import type { CurrentTurn } from './turns.js';

/** What a call still queued or running gets when its program ends (the program no longer reads it). */
const PROGRAM_ENDED_REPLY: CodeCallReply = { ok: false, message: 'run_code ended before this call finished' };

/** A program's calls all listen to one signal, like a turn's (tools need not remove their listeners). */
function signalForMany(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/** The lanes of one agent's programs; ended with the program, its turn, or the activation that ran it. */
export class CodePrograms {
  /** Made by the first program's first call: most agents never run one. */
  private lanes: Map<string, ProgramLane> | undefined;

  constructor(private readonly agent: GatewayAgent) {}

  call(raw: unknown): Promise<CodeCallReply> {
    const call = codeCallRequest.parse(raw, 'callFromCode');
    return this.laneOf(call.program).submit(call);
  }

  end(raw: unknown): void {
    this.endLane(programId.parse(raw, 'endProgram'));
  }

  /** The activation that ran these programs is over (finished, failed, or recovered onto another thread). */
  endAll(): void {
    if (this.lanes === undefined) return;
    for (const lane of this.lanes.values()) lane.end();
    this.lanes.clear();
  }

  private laneOf(program: string): ProgramLane {
    this.lanes ??= new Map();
    let lane = this.lanes.get(program);
    if (lane === undefined) {
      const turn = this.agent.turns.current;
      lane = new ProgramLane(this.agent, turn);
      this.lanes.set(program, lane);
      turn?.cleanup.push(() => this.endLane(program));
    }
    return lane;
  }

  private endLane(program: string): void {
    this.lanes?.get(program)?.end();
    this.lanes?.delete(program);
  }
}

interface Pending {
  readonly call: CodeCallWire;
  readonly answer: (reply: CodeCallReply) => void;
  cls?: ConcurrencyClass;
}

class ProgramLane {
  /** The signal every call of the program runs with: aborted when the program or its turn ends. */
  private readonly controller = signalForMany();
  /** Calls not started yet, in arrival order. */
  private readonly queue = new Fifo<Pending>();
  private running = 0;
  private exclusiveRunning = false;
  /** Every call not answered yet (queued or running): answered at once when the program ends. */
  private readonly unanswered = new Set<Pending>();
  private ended = false;

  constructor(
    private readonly agent: GatewayAgent,
    private readonly turn: CurrentTurn | undefined,
  ) {
    const turnCancel = turn?.controller;
    if (turnCancel?.aborted) this.controller.abort(turnCancel.reason);
    else turnCancel?.addEventListener('abort', this.onTurnAbort, { once: true });
  }

  submit(call: CodeCallWire): Promise<CodeCallReply> {
    if (this.ended) return Promise.resolve(PROGRAM_ENDED_REPLY);
    return new Promise((answer) => {
      const pending: Pending = { call, answer };
      this.unanswered.add(pending);
      this.queue.push(pending);
      this.startReady();
    });
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.turn?.controller.removeEventListener('abort', this.onTurnAbort);
    this.queue.clear();
    for (const pending of this.unanswered) pending.answer(PROGRAM_ENDED_REPLY);
    this.unanswered.clear();
    this.controller.abort(new BroodError('ABORTED', 'the run_code program ended'));
  }

  private readonly onTurnAbort = (): void => {
    this.controller.abort(this.turn?.controller.reason);
  };

  /** Starts queued calls in order while the bounds allow (an exclusive call waits for the lane to empty). */
  private startReady(): void {
    for (let next = this.queue.peek(); next !== undefined && !this.exclusiveRunning; next = this.queue.peek()) {
      next.cls ??= this.classify(next.call);
      const limit = next.cls === 'exclusive' ? 1 : this.agent.deps.limits.maxParallelToolCalls;
      if (this.running >= limit) return;
      this.queue.take();
      this.start(next, next.cls);
    }
  }

  private classify(call: CodeCallWire): ConcurrencyClass {
    try {
      return classOf(this.agent, this.turn, call);
    } catch {
      return 'exclusive';
    }
  }

  private start(pending: Pending, cls: ConcurrencyClass): void {
    this.running += 1;
    if (cls === 'exclusive') this.exclusiveRunning = true;
    const { call } = pending;
    // The program's turn's per-request context: its approval rule and its body read it as `ctx.context`.
    const context = this.turn?.context;
    const given = context === undefined ? {} : { context };
    const request = {
      name: call.name,
      arguments: call.arguments,
      callId: call.callId,
      signal: this.controller.signal,
      ...given,
    };
    const { telemetry } = this.agent.deps.hub;
    const endSpan = telemetry?.codeCall(this.agent, call.name, call.callId);
    // Host-style: Code Mode never collapses a call made from inside run_code. The approval gate may
    // park the call: the program's `tools.x()` promise waits, and the sandbox's busy clock is paused
    // while any of its calls is pending (src/code-mode), so only the wall limit runs meanwhile.
    const lease = this.agent.lease;
    const run = (args: unknown) => () =>
      this.agent.deps.scheduler.asCaller(lease, () =>
        this.agent.init.tools.registry.execute({ ...request, arguments: args }),
      );
    // Write before effect: the run_code call's `tool/call` reached the parent ahead of this call; no
    // call of the program runs before that record is written.
    void this.agent.writer
      .written()
      .then(() => this.agent.deps.approvals.check(this.agent, { ...call, ...given }, true, this.controller.signal))
      .then((outcome) => {
        if (!outcome.run) return outcome.result;
        // Under telemetry the call is the scope of what its execute() starts.
        return telemetry ? telemetry.withCall(this.agent.id, call.callId, run(outcome.args)) : run(outcome.args)();
      })
      .then((result) => {
        endSpan?.(result.isError, result.error?.code);
        return result;
      })
      .then(
        (result) => callReplyOf(result, this.agent.deps.limits.codeLimits.maxOutputBytes),
        (error: unknown): CodeCallReply => ({ ok: false, message: errorMessage(error) }),
      )
      .then((reply) => {
        this.running -= 1;
        if (cls === 'exclusive') this.exclusiveRunning = false;
        // After the program ended the call was answered already: its result is dropped here.
        if (!this.unanswered.delete(pending)) return;
        pending.answer(reply);
        this.startReady();
      });
  }
}

/**
 * A tool result as the sandbox takes it: a string value as it is, any other value (or the content,
 * for a tool that returned none or a value that is not JSON) as JSON text; refused when its UTF-8
 * size is over `maxBytes`.
 */
function callReplyOf(result: ToolResult, maxBytes: number): CodeCallReply {
  if (result.isError) return { ok: false, message: result.error?.message ?? result.content };
  const { value } = result;
  const json = typeof value === 'string' ? undefined : jsonOf(value);
  const reply: CodeCallReply =
    json !== undefined ? { ok: true, json } : { ok: true, text: typeof value === 'string' ? value : result.content };
  const payload = 'text' in reply ? reply.text : reply.json;
  // A UTF-16 unit is at most 3 UTF-8 bytes: most results need no count.
  if (payload.length * 3 <= maxBytes) return reply;
  const bytes = Buffer.byteLength(payload);
  if (bytes <= maxBytes) return reply;
  return {
    ok: false,
    message: `the tool result (${bytes} bytes) exceeds codeResourceLimits.maxOutputBytes (${maxBytes} bytes)`,
  };
}

/** undefined for a value JSON cannot encode (undefined itself, a function, a cycle, a BigInt). */
function jsonOf(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
