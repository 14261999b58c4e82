/**
 * The agent loop (SPEC §7). Pure and transport-agnostic: everything that is policy (claiming
 * messages, resolving the view, executing tools, persisting events) goes through a DriverGateway; this
 * file only does the work — model requests, tool scheduling, stop-reason bookkeeping.
 */
import { DEFAULTS } from '../defaults.js';
import { BroodError, errorMessage } from '../errors.js';
import { partsField } from '../models/content-parts.js';
import { estimateTokens } from '../models/estimate.js';
import { historyTail } from '../models/history-tail.js';
import { sendsAtSlot } from '../models/http-adapter.js';
import type {
  ChatMessage,
  ModelAdapter,
  ModelFinish,
  ModelRequest,
  ModelResponse,
  ToolCallRecord,
} from '../models/types.js';
import { runToolCalls, toolCallData, toolResultData } from '../tool-pool.js';
import type { ToolResult } from '../types.js';
import { LazyAbortController } from '../util/lazy-abort.js';
import type { DriverGateway } from '../wire/gateway.js';
import type { ClaimedMessage, ConcurrencyClass, DriverPlan, DriverView, TurnReport } from '../wire/protocol.js';
import { type Admission, admitted } from './admission.js';
import { EventOutbox } from './event-outbox.js';
import { JoinedReportsWatch } from './joined-reports.js';
import { answerOf, assistantData, failedResponse, notRunResult, withAdmission } from './model-answer.js';
import { requestData } from './request-event.js';
import { type StopCondition, stepCountIs } from './step-count.js';
import { FINAL_FINISHES, requestsSinceUserMessage, TurnState } from './turn-state.js';
import { ViewTracker } from './view-tracker.js';

export interface DriverHooks {
  /** Runs `run_code` (Code Mode); absent where Code Mode is unavailable. */
  runCode?: (call: ToolCallRecord, signal: AbortSignal) => Promise<ToolResult>;
  /** The thread this driver runs on, reported with each model request (0, the default: the main thread). */
  threadId?: number;
}

export class Driver {
  private readonly history: ChatMessage[];
  private readonly views: ViewTracker;
  private readonly joinedReports: JoinedReportsWatch;
  /** maxSteps: the turn stops once it has made that many model requests. */
  private readonly stepLimit: StopCondition;
  /** The running turn's cancellation: its AbortSignal is made only if an adapter or Code Mode reads it. */
  private turnAbort: LazyAbortController | undefined;
  private currentTurn: number | undefined;
  /** The running turn's W3C trace context (the parent's telemetry), for its model requests. */
  private traceHeaders: Record<string, string> | undefined;
  /**
   * A cancel for a turn this driver has not begun: it crossed the claim that starts the turn (it
   * arrived while the adapter loaded, in the batch that carried the claim, or before a recovered
   * driver resumed). That turn begins aborted.
   */
  private cancelledAhead: number | undefined;
  private readonly events: EventOutbox;
  private alreadyLogged: Set<string> | undefined;
  /** A turn resumed after a crash: calls of unknown outcome, which only the parent may answer. */
  private interrupted: Set<string> | undefined;
  private readonly eventsFlag: Int32Array | undefined;
  /** The next request was admitted with the plan (the activation's first): it asks nothing. */
  private preAdmitted: boolean;
  /** The parent's model proxy as adapters call it (made on the first request that is handed it). */
  private proxyCall: ((call: unknown) => Promise<unknown>) | undefined;

  constructor(
    private readonly plan: DriverPlan,
    private readonly host: DriverGateway,
    private readonly adapter: ModelAdapter,
    private readonly hooks: DriverHooks = {},
  ) {
    this.history = [...plan.history];
    this.events = new EventOutbox(host);
    this.views = new ViewTracker(plan.view, plan.versions, host);
    this.joinedReports = new JoinedReportsWatch(plan);
    this.stepLimit = stepCountIs(plan.maxSteps ?? DEFAULTS.maxSteps);
    this.eventsFlag = plan.eventsFlag;
    this.preAdmitted = plan.firstAdmitted === true;
  }

  /** True while a host subscribes to events: only then is streamed text worth sending. */
  private get streaming(): boolean {
    return this.eventsFlag !== undefined && Atomics.load(this.eventsFlag, 0) !== 0;
  }

  /** Cancels the running turn (or the given one, if it is the running one). Queued messages are kept. */
  cancel(turn?: number): void {
    if (turn !== undefined && turn !== this.currentTurn) {
      this.cancelledAhead = turn;
      return;
    }
    this.turnAbort?.abort(cancelledError());
  }

  /** The turn's cancellation; aborted at once when its cancel arrived before the turn began. */
  private beginTurn(turn: number): LazyAbortController {
    const controller = new LazyAbortController();
    this.turnAbort = controller;
    this.currentTurn = turn;
    if (this.cancelledAhead === turn) controller.abort(cancelledError());
    this.cancelledAhead = undefined;
    return controller;
  }

  /** Runs turns until the parent has no unclaimed message left. */
  async runActivation(): Promise<void> {
    let message = this.plan.resumeTurn
      ? await this.finishTurn(await this.resumeTurn(this.plan.resumeTurn))
      : (this.plan.firstMessage ?? (await this.host.claimNext()));
    while (message !== null) message = await this.finishTurn(await this.runTurn(message));
  }

  private async finishTurn(report: TurnReport): Promise<ClaimedMessage | null> {
    await this.events.flush();
    return this.host.endTurn(report);
  }

  /**
   * Recovery after the thread this agent shared died: the history (rebuilt by the parent from the log)
   * may end with tool calls that have no result yet. They are issued again with the same call ids;
   * the parent re-attaches them to the executions already running, so no tool runs twice.
   */
  private async resumeTurn(resumed: NonNullable<DriverPlan['resumeTurn']>): Promise<TurnReport> {
    const turn = new TurnState(resumed.turn);
    turn.requests = requestsSinceUserMessage(this.history);
    const signal = this.beginTurn(resumed.turn);
    this.alreadyLogged = new Set(resumed.startedCallIds);
    this.interrupted = resumed.interruptedCallIds ? new Set(resumed.interruptedCallIds) : undefined;
    try {
      const ended = FINAL_FINISHES[resumed.lastFinish ?? ''];
      if (ended) return turn.finish(ended);
      const pending = historyTail(this.history).unanswered;
      if (pending.length > 0) {
        const view = await this.views.current().catch(() => this.views.last);
        await this.runCalls(pending, view, signal);
      }
      return await this.steps(turn, signal);
    } finally {
      this.turnAbort = undefined;
      this.currentTurn = undefined;
      this.alreadyLogged = undefined;
      this.interrupted = undefined;
    }
  }

  /** Not async: the turn's state is reset by steps() itself, so nothing waits here while the turn runs. */
  private runTurn(message: ClaimedMessage): Promise<TurnReport> {
    for (const joined of message.joined ?? []) this.history.push({ role: 'user', text: joined.text });
    this.history.push({ role: 'user', text: message.text, ...partsField(message.parts) });
    const turn = new TurnState(message.turn);
    this.traceHeaders = message.traceHeaders;
    if (message.aborted) return Promise.resolve(turn.finish('aborted'));
    return this.steps(turn, this.beginTurn(message.turn));
  }

  /** The turn's steps until it ends; the turn's abort and number are cleared however it ends. */
  private async steps(turn: TurnState, signal: LazyAbortController): Promise<TurnReport> {
    try {
      for (;;) {
        if (signal.aborted) return turn.finish('aborted');
        if (this.joinedReports.take()) await this.joinMessages(turn.turn);
        let view: DriverView;
        try {
          // Unchanged (almost always): no await, so a step costs no promise for it.
          view = this.views.changed() ? await this.views.current() : this.views.last;
        } catch (error) {
          return turn.finish('error', errorMessage(error));
        }
        // A cancel that came while the view was re-read: no request, not even a logged one.
        if (signal.aborted) return turn.finish('aborted');
        const response = await this.request(view, turn, signal);
        if (response === 'aborted') return turn.finish('aborted');
        turn.requests += 1;
        turn.addUsage(response.usage);
        if (response.text.trim() !== '') turn.output = response.text;
        const calls =
          response.finish === 'max-tokens' || response.finish === 'error' || response.finish === 'refusal'
            ? []
            : response.toolCalls;
        this.recordAssistant(response, calls.length > 0 ? 'tool-calls' : response.finish);
        if (response.finish === 'max-tokens') return this.endTruncated(turn, response);
        if (response.finish === 'error') return turn.finish('error', response.diagnostic ?? 'the model request failed');
        if (response.finish === 'refusal') return turn.finish('refusal');
        if (calls.length === 0) return turn.finish('completed');
        if (this.stepLimit.isMet(turn)) return this.endAtStepLimit(turn, calls);
        await this.runCalls(calls, view, signal);
        if (signal.aborted) return turn.finish('aborted');
      }
    } finally {
      this.turnAbort = undefined;
      this.currentTurn = undefined;
    }
  }

  /** Messages for this step (a child's report) follow the step's tool results, before the request. */
  private async joinMessages(turn: number): Promise<void> {
    await this.events.flush(); // the results they follow are logged first
    for (const joined of await this.host.joinMessages(turn)) this.history.push({ role: 'user', text: joined.text });
  }

  /**
   * One model request. Not async, nor is what follows the log: a child waiting on its model (a second
   * or more, and a wide fan-out has one per running child) holds one reaction here, not a suspended
   * frame. Only a governed request waits for its admission in a frame of its own.
   */
  private request(view: DriverView, turn: TurnState, signal: LazyAbortController): Promise<ModelResponse | 'aborted'> {
    if (this.plan.admission === true) return this.governedRequest(view, turn, signal);
    this.preAdmitted = false;
    return this.logAndSend(view, turn, signal, undefined);
  }

  private async governedRequest(
    view: DriverView,
    turn: TurnState,
    signal: LazyAbortController,
  ): Promise<ModelResponse | 'aborted'> {
    const admission = await admitted(this.plan, this.host, () => estimateTokens(view.system, this.history), signal, {
      preAdmitted: this.preAdmitted,
      reportsWrites: sendsAtSlot(this.adapter),
    });
    this.preAdmitted = false;
    if (admission === 'aborted') return 'aborted';
    return this.logAndSend(view, turn, signal, admission);
  }

  /**
   * Logs the request, then sends it once the log has left. An adapter that sends at the slot itself
   * waits for it right before its write (after building the body), so nothing runs between the slot
   * and the send; for any other adapter the slot comes first.
   */
  private logAndSend(
    view: DriverView,
    turn: TurnState,
    signal: LazyAbortController,
    admission: Admission | undefined,
  ): Promise<ModelResponse | 'aborted'> {
    this.events.emit('model/request', requestData(this.plan.route, view, this.hooks.threadId ?? 0));
    // Sent before the adapter runs: a request that kills the thread synchronously (a fault) is still logged.
    this.events.flushSoon();
    const sent = this.host.sent?.();
    const atSend = admission !== undefined && sendsAtSlot(this.adapter);
    const slotFirst = admission !== undefined && !atSend ? admission : undefined;
    if (sent === undefined && slotFirst === undefined) return this.send(view, turn, signal, admission, atSend);
    return (sent ?? Promise.resolve())
      .then(() => slotFirst?.atSlot())
      .then(() => this.send(view, turn, signal, admission, atSend));
  }

  /** The adapter's request, and what its answer (or its failure) becomes for the loop. */
  private send(
    view: DriverView,
    turn: TurnState,
    signal: LazyAbortController,
    admission: Admission | undefined,
    atSend: boolean,
  ): Promise<ModelResponse | 'aborted'> {
    // Decided per request: with nobody watching, adapters get no callback and nothing is produced.
    const stream = this.streaming ? { open: true } : undefined;
    let answer: unknown;
    try {
      answer = this.adapter.request(this.requestOptions(view, turn, signal, admission, atSend, stream));
    } catch (error) {
      return Promise.resolve(signal.aborted ? 'aborted' : failedResponse(error));
    }
    return Promise.resolve(answer).then(
      (raw) => {
        // A delta an adapter reports after answering would land after its assistant-message: ignored.
        if (stream) stream.open = false;
        return answerOf(raw);
      },
      (error: unknown) => {
        if (stream) stream.open = false;
        return signal.aborted ? 'aborted' : failedResponse(error);
      },
    );
  }

  /** What the adapter is given: optional keys only when set (no object made per request to spread). */
  private requestOptions(
    view: DriverView,
    turn: TurnState,
    cancel: LazyAbortController,
    admission: Admission | undefined,
    atSend: boolean,
    stream: { open: boolean } | undefined,
  ): ModelRequest {
    const options: Omit<ModelRequest, 'signal'> = {
      route: this.plan.route,
      system: view.system,
      messages: this.history,
      ownStart: this.plan.ownStart,
      tools: view.tools,
    };
    if (this.traceHeaders !== undefined) options.traceHeaders = this.traceHeaders;
    if (this.host.modelProxy !== undefined)
      options.modelProxy = this.proxyCall ??= (call) => this.host.modelProxy(call);
    if (stream !== undefined)
      options.onTextDelta = (delta: string): void => {
        if (stream.open) this.events.emitDelta(turn.turn, delta);
      };
    return withAdmission(options, admission, atSend, cancel);
  }

  /** Step limit reached with calls pending: they never run, but each gets a result so the history stays well-formed. */
  private endAtStepLimit(turn: TurnState, calls: ToolCallRecord[]): TurnReport {
    for (const call of calls) this.commitResult(call, notRunResult(this.stepLimit.notRun));
    return turn.finish('max-steps', this.stepLimit.diagnostic(calls.length));
  }

  private recordAssistant(response: ModelResponse, finish: ModelFinish): void {
    const reasoning = response.reasoning === undefined ? {} : { reasoning: response.reasoning };
    this.history.push({ role: 'assistant', text: response.text, toolCalls: response.toolCalls, ...reasoning });
    this.events.emit('assistant/message', assistantData(response, finish));
  }

  /** Output cap hit: truncated tool calls never run, but each gets a result so the history stays well-formed. */
  private endTruncated(turn: TurnState, response: ModelResponse): TurnReport {
    for (const call of response.toolCalls)
      this.commitResult(call, notRunResult('not run: the response hit its output cap'));
    return turn.finish('max-tokens');
  }

  private async runCalls(calls: ToolCallRecord[], view: DriverView, signal: LazyAbortController): Promise<void> {
    if (this.plan.toolsInParent && !this.runsCodeHere(calls)) return this.runCallsInParent(calls);
    await runToolCalls(calls, this.plan.maxParallelToolCalls, signal, {
      classify: (call) => this.classify(call, view),
      execute: (call) => this.executeCall(call, signal),
      started: (call) => {
        if (this.alreadyLogged?.has(call.callId)) return;
        this.events.emit('tool/call', toolCallData(call));
      },
      commit: (call, result) => this.commitResult(call, result),
    });
  }

  /** run_code under Code Mode runs in this thread's sandbox, so a message with one is scheduled here. */
  private runsCodeHere(calls: readonly ToolCallRecord[]): boolean {
    return calls.some((call) => this.sandboxFor(call) !== undefined);
  }

  /** This thread's Code Mode runner, when `call` is one it runs. */
  private sandboxFor(call: ToolCallRecord): DriverHooks['runCode'] {
    if (this.interrupted?.has(call.callId)) return undefined;
    return call.name === 'run_code' && this.plan.codeMode !== 'native' ? this.hooks.runCode : undefined;
  }

  /**
   * The parent runs the message's calls (same pool, logged there; see DriverGateway.runTools): a call
   * that settles starts the next without waiting for this thread. The results come back in model
   * order and only join the history here. The log of the assistant message leaves first, on the same link.
   */
  private async runCallsInParent(calls: ToolCallRecord[]): Promise<void> {
    this.events.flushSoon();
    const results = await this.host.runTools({ calls });
    if (results.length !== calls.length)
      throw new BroodError('INTERNAL', `runTools answered ${results.length} results for ${calls.length} calls`);
    for (let index = 0; index < calls.length; index++)
      this.pushResult(calls[index] as ToolCallRecord, results[index] as ToolResult);
  }

  private async classify(call: ToolCallRecord, planned: DriverView): Promise<ConcurrencyClass> {
    // Re-read right before each start: a registry change since the request may have changed the class.
    const view = this.views.changed() ? await this.views.current().catch(() => planned) : planned;
    const cls = view.classes[call.name];
    if (cls === 'dynamic') return this.host.classify(call.name, call.arguments);
    return cls ?? 'exclusive';
  }

  private executeCall(call: ToolCallRecord, signal: LazyAbortController): Promise<ToolResult> {
    // This call's tool/call leaves ahead of the execution on the same link: the parent starts the body
    // only once it is written (write before effect), and a child it starts is seen after it.
    if (this.events.hasPending) this.events.flushSoon();
    const runCode = this.sandboxFor(call);
    if (runCode) return runCode(call, signal.signal);
    return this.host.executeTool(call);
  }

  private pushResult(call: ToolCallRecord, result: ToolResult): void {
    this.history.push({
      role: 'tool',
      callId: call.callId,
      name: call.name,
      content: result.content,
      isError: result.isError,
      ...(result.parts === undefined ? {} : { parts: result.parts }),
    });
  }

  private commitResult(call: ToolCallRecord, result: ToolResult): void {
    this.pushResult(call, result);
    this.events.emit('tool/result', toolResultData(call, result));
  }
}

function cancelledError(): BroodError {
  return new BroodError('ABORTED', 'the turn was cancelled');
}
