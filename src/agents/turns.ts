/**
 * An agent's turn state, owned by the agent and changed only through these methods: which turn is
 * running, the parent's mirror of the model history, the route last requested and the last result.
 * The gateway (driver messages) and the agent (activation lifecycle) both go through here, so every
 * write to turn state is one of the named transitions below.
 */
import { isMessageParts, partsField } from '../models/content-parts.js';
import { reasoningField } from '../models/reasoning.js';
import type { ChatMessage } from '../models/types.js';
import { addUsage, sumUsage } from '../models/usage.js';
import type { Budget } from '../scheduler/types.js';
import type { DriverEmittedEvent } from '../sessions/event-types.js';
import type { SessionWriter } from '../sessions/session-writer.js';
import type { ModelRoute, StopReason, TurnResult, Usage, UsageNode } from '../types.js';
import { LazyAbortController } from '../util/lazy-abort.js';
import type { ClaimedMessage, JoinedMessage, TurnReport } from '../wire/protocol.js';
import type { CurrentTurn, HeldCall } from './current-turn.js';
import type { FinishedChildren } from './finished-children.js';
import { routeOfRequest } from './history.js';
import type { Inbox, QueuedMessage } from './inbox.js';
import { NO_INTERRUPTED_CALLS, NO_OPEN_REQUESTS } from './none-yet.js';
import type { OpenTurn, ResumeInputs } from './open-turn.js';
import { recordedRunOptions, type StructuredTurn } from './structured-turn.js';

export type { CurrentTurn, HeldCall };

export interface TurnLedgerInit {
  writer: SessionWriter;
  inbox: Inbox;
  history: ChatMessage[];
  lastTurn: number;
  lastRequestRoute: ModelRoute | undefined;
  /** The agent the ledger keeps turns for (its methods, so an agent allocates no closure per hook). */
  owner: LedgerOwner;
  /** The agent's budgets (src/agents/governor.ts): told when turns start, progress and end. */
  governor: TurnHooks;
}

/** What the ledger asks of the agent it keeps turns for. */
export interface LedgerOwner {
  readonly isDisposed: boolean;
  /** Bumped when the presented tools change for the agent alone (a structured turn's own tool). */
  bumpView(): void;
  /** Tells the running driver that a `next-step` message waits for its next model step. */
  stepPending(): void;
  /** Who this agent is in a usage tree (its route is the latest one it requested). */
  usageIdentity(): Pick<UsageNode, 'agentId' | 'label' | 'provider' | 'model'>;
  /** The running turn's W3C trace context, when telemetry propagates it (read right after turn/start). */
  traceHeaders(): Record<string, string> | undefined;
}

/** What the ledger tells the agent's budgets (src/agents/governor.ts). */
export interface TurnHooks {
  /** The budget accepted with message `messageId` (recorded in its turn's `turn/start`). */
  budgetOf(messageId: string): Budget | undefined;
  turnStarted(turn: CurrentTurn): void;
  /** Tokens the turn's children spent that no live account below it was charged (a resumed turn's). */
  chargeChildren(turn: CurrentTurn, tokens: number): void;
  /** A response (`withTokens`: its usage, or a child's, was just added) or a tool result arrived. */
  progressed(turn: CurrentTurn, withTokens: boolean): void;
  /** The turn's stop reason and diagnostic, or 'budget' when a budget ended it. */
  outcome(turn: CurrentTurn, stopReason: StopReason, diagnostic: string | undefined): [StopReason, string | undefined];
}

export class TurnLedger {
  /** The parent's mirror of the model history (what the next activation or a recovery starts from). */
  readonly history: ChatMessage[];
  private turnCounter: number;
  private running: CurrentTurn | undefined;
  private requestRoute: ModelRoute | undefined;
  private latest: TurnResult | undefined;

  constructor(private readonly init: TurnLedgerInit) {
    this.history = [...init.history];
    this.turnCounter = init.lastTurn;
    this.requestRoute = init.lastRequestRoute;
  }

  get current(): CurrentTurn | undefined {
    return this.running;
  }

  get lastTurn(): number {
    return this.turnCounter;
  }

  /** The route of the latest logged model/request (children inherit it, SPEC §9 "Child route"). */
  get lastRequestRoute(): ModelRoute | undefined {
    return this.requestRoute;
  }

  /** The result of the most recent turn (a continuable child's settlement notice quotes it). */
  get lastResult(): TurnResult | undefined {
    return this.latest;
  }

  /**
   * Claims the next accepted message as a new turn, with the quiet messages queued ahead of it;
   * `turn/start` is durable before the driver sees it.
   */
  async claimNext(): Promise<ClaimedMessage | null> {
    const { inbox, writer } = this.init;
    for (;;) {
      if (this.init.owner.isDisposed) return null;
      const taken = inbox.takeTurn();
      if (!taken) return null;
      const head = taken.claimed;
      const joined = await durableOnly(taken.joined);
      try {
        await head.durable;
      } catch {
        inbox.unshift(joined); // they wait for the next message that claims a turn
        continue; // its send() already rejected: the message was never accepted
      }
      const turn = this.turnCounter + 1;
      this.turnCounter = turn;
      const aborted = head.signal?.aborted === true;
      this.running = newTurn(turn, head.id, head.structured, head.context);
      const budget = this.init.governor.budgetOf(head.id); // read before the turn's watch takes it
      this.init.governor.turnStarted(this.running);
      // The turn tool changes what the model is shown: drivers re-read their view before the next request.
      if (head.structured) this.init.owner.bumpView();
      for (const message of joined) this.history.push({ role: 'user', text: message.text });
      this.history.push({ role: 'user', text: head.text, ...partsField(head.parts) });
      const joinedIds = joined.length === 0 ? {} : { joined: joined.map((message) => message.id) };
      // Durable before any tool of the turn runs: after a crash this message is never run again, and
      // the turn it resumes keeps the message's own budget (as given to the turn) and output schema.
      const options = recordedRunOptions(budget, head.structured);
      writer.append([{ type: 'turn/start', data: { turn, messageIds: [head.id], ...joinedIds, ...options } }]);
      await writer.flush();
      // A report waiting behind the claimed message is for this turn's first step: tell its driver.
      if (inbox.stepPending) this.init.owner.stepPending();
      const traceHeaders = this.init.owner.traceHeaders();
      // Re-read after the flush: a cancel that raced with the claim reached no running turn in the driver.
      return {
        ...(traceHeaders === undefined ? {} : { traceHeaders }),
        turn,
        messageId: head.id,
        text: head.text,
        ...partsField(head.parts),
        aborted: aborted || this.running?.controller.aborted === true,
        ...(joined.length === 0 ? {} : { joined: joined.map(toJoined) }),
      };
    }
  }

  /**
   * Continues the turn a crash left open (its `turn/start` is logged): its tallies come from the log,
   * so budgets count what was spent; the result settles the waiters of the message it claimed.
   */
  resumeOpen(open: OpenTurn, inputs: Omit<ResumeInputs, 'finished'>): CurrentTurn {
    const { awaitingApproval, context, structured } = inputs;
    const turn = newTurn(open.turn, open.messageId, structured, context, {
      interrupted: new Map(),
      awaitingApproval: new Set(),
    });
    addUsage(turn.usage, open.usage);
    turn.output = open.output;
    turn.lastFinish = open.lastFinish;
    for (const [callId, call] of open.interrupted) {
      turn.started.add(callId);
      turn.interrupted.set(callId, call);
      if (awaitingApproval.has(callId)) turn.awaitingApproval.add(callId);
    }
    this.turnCounter = Math.max(this.turnCounter, open.turn);
    this.running = turn;
    this.init.governor.turnStarted(turn);
    return turn;
  }

  /**
   * A model step of `turn` takes the reports waiting at the front of the inbox (Inbox.takeStep):
   * `turn/join` is durable before the driver adds them to the request it is about to make.
   */
  async joinStep(turn: number): Promise<JoinedMessage[]> {
    const running = this.running;
    if (running === undefined || running.turn !== turn || this.init.owner.isDisposed) return [];
    const joined = await durableOnly(this.init.inbox.takeStep());
    if (joined.length === 0) return [];
    for (const message of joined) this.history.push({ role: 'user', text: message.text });
    const messageIds = joined.map((message) => message.id);
    this.init.writer.append([{ type: 'turn/join', data: { turn, messageIds } }]);
    await this.init.writer.flush();
    return joined.map(toJoined);
  }

  /** Mirrors one logged driver event into the history and the running turn's tallies. */
  mirror(event: DriverEmittedEvent): void {
    const turn = this.running;
    if (event.type === 'model/request') {
      this.requestRoute = routeOfRequest(event.data);
    } else if (event.type === 'assistant/message') {
      const { text, toolCalls, usage, finish } = event.data;
      this.history.push({ role: 'assistant', text, toolCalls, ...reasoningField(event.data) });
      if (turn) {
        // A new step: the previous message's calls are over for its driver, and a model may reuse their ids.
        // (V8 gives a cleared collection a new table even when it was empty: a fan-out's children clear
        // these on every step, and most of them empty.)
        if (turn.committed.size > 0) turn.committed.clear();
        if (turn.started.size > 0) turn.started.clear();
        if (turn.interrupted.size > 0) turn.interrupted.clear();
        addUsage(turn.usage, usage);
        if (text.trim() !== '') turn.output = text;
        turn.lastFinish = finish;
        this.init.governor.progressed(turn, true);
      }
    } else if (event.type === 'tool/call') {
      turn?.started.add(event.data.callId);
    } else if (event.type === 'tool/result') {
      const { callId, name, content, isError } = event.data;
      // A driver's event: its parts are taken only when well-formed (the next plan carries them back).
      const parts = isMessageParts(event.data.parts) ? event.data.parts : undefined;
      this.history.push({ role: 'tool', callId, name, content, isError, ...partsField(parts) });
      turn?.calls.delete(callId);
      if (turn) this.init.governor.progressed(turn, false);
    }
  }

  /**
   * A request that a dead or force-stopped driver never answered still gets its `assistant/message`
   * with `finish: 'error'` (SPEC §6), so the history stays well-formed.
   */
  recordUnansweredRequest(turn: CurrentTurn): void {
    this.history.push({ role: 'assistant', text: '', toolCalls: [] });
    turn.lastFinish = 'error';
    this.init.writer.append([
      {
        type: 'assistant/message',
        data: { text: '', toolCalls: [], usage: { inputTokens: 0, outputTokens: 0 }, finish: 'error' },
      },
    ]);
  }

  /**
   * A resumed turn's children that had finished before the crash: their usage is the turn's again, and
   * their tokens count against its budget as they did when they were spent.
   */
  addFinishedChildren(turn: CurrentTurn, finished: FinishedChildren): void {
    addUsage(turn.childUsage, finished.usage);
    turn.childTrees.push(...finished.trees);
    this.init.governor.chargeChildren(turn, finished.usage.inputTokens + finished.usage.outputTokens);
  }

  /** Adds a foreground child's usage to the running turn (rolled up exactly once, at turn end). */
  addChildUsage(usage: Usage, tree?: UsageNode): void {
    if (!this.running) return;
    addUsage(this.running.childUsage, usage);
    if (tree !== undefined) this.running.childTrees.push(tree);
    this.init.governor.progressed(this.running, true);
  }

  /** Ends `turn`: `turn/end` is flushed, then the message's run() settles with the parent's own tally. */
  async finish(report: TurnReport, turn: CurrentTurn): Promise<void> {
    const { writer, inbox } = this.init;
    if (this.running === turn) this.running = undefined;
    for (const cleanup of turn.cleanup) cleanup();
    // The parent's own tally (from logged assistant messages) is authoritative: it survives recoveries.
    const usage = sumUsage(turn.usage, turn.childUsage);
    const structured = structuredOutcome(report, turn.structured);
    const [stopReason, reportDiagnostic] = this.init.governor.outcome(
      turn,
      structured.stopReason,
      structured.diagnostic,
    );
    const why = stopReason === 'budget' ? reportDiagnostic : (turn.heldDiagnostic ?? reportDiagnostic);
    const diagnostic = why === undefined ? {} : { diagnostic: why };
    writer.append([{ type: 'turn/end', data: { turn: report.turn, reason: stopReason, ...diagnostic } }], { usage });
    if (turn.structured) this.init.owner.bumpView(); // the turn tool is gone for the next request
    try {
      await writer.flush();
    } catch (error) {
      inbox.fail(turn.messageId, error);
      return;
    }
    const usageTree: UsageNode = {
      ...this.init.owner.usageIdentity(),
      usage: { ...turn.usage },
      total: usage,
      children: turn.childTrees,
    };
    const result: TurnResult = { output: turn.output, stopReason, usage, usageTree, ...diagnostic };
    if (turn.structured?.set) result.structured = turn.structured.value;
    this.latest = result;
    inbox.settle(turn.messageId, result);
  }
}

function newTurn(
  turn: number,
  messageId: string,
  structured: StructuredTurn | undefined,
  context: unknown,
  resumed?: Pick<CurrentTurn, 'interrupted' | 'awaitingApproval'>,
): CurrentTurn {
  return {
    turn,
    messageId,
    controller: new LazyAbortController(),
    childUsage: { inputTokens: 0, outputTokens: 0 },
    childTrees: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    output: '',
    started: new Set(),
    lastFinish: undefined,
    cleanup: [],
    calls: new Map(),
    committed: new Map(),
    structured,
    context,
    held: undefined,
    interrupted: resumed?.interrupted ?? NO_INTERRUPTED_CALLS,
    awaitingApproval: resumed?.awaitingApproval ?? NO_OPEN_REQUESTS,
  };
}

/** A structured turn that completed without a valid structured_output call did not do what was asked. */
function structuredOutcome(
  report: TurnReport,
  structured: StructuredTurn | undefined,
): Pick<TurnReport, 'stopReason' | 'diagnostic'> {
  if (structured === undefined || structured.set || report.stopReason !== 'completed') {
    return report.diagnostic === undefined
      ? { stopReason: report.stopReason }
      : { stopReason: report.stopReason, diagnostic: report.diagnostic };
  }
  return { stopReason: 'error', diagnostic: structured.missing };
}

/** The messages whose acceptance became durable; one whose write failed was never accepted (its sender was told). */
async function durableOnly(messages: readonly QueuedMessage[]): Promise<QueuedMessage[]> {
  const kept: QueuedMessage[] = [];
  for (const message of messages) {
    try {
      await message.durable;
      kept.push(message);
    } catch {
      // dropped, like an unaccepted message in claimNext
    }
  }
  return kept;
}

function toJoined(message: QueuedMessage): JoinedMessage {
  return { messageId: message.id, text: message.text };
}
