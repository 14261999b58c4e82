/**
 * A restored agent whose last turn a crash left open continues it (AgentImpl.continueOpenTurn); what
 * was resumed is kept for whoever asked for the restore (brood.recover(), resumeAgent, a parent's
 * delegation call waiting for its child) and announced as a `recovered` host event.
 */
import { baseOf } from '../events/from-log.js';
import { knownEvent } from '../sessions/event-types.js';
import type { SessionEvent, StopReason, TurnResult } from '../types.js';
import type { AgentImpl } from './agent.js';
import { type OpenTurn, openTurnOf, type ResumeInputs } from './open-turn.js';
import { decideInterrupted } from './resumed-calls.js';

export interface ContinuedTurn {
  turn: number;
  result: Promise<TurnResult>;
  /** Model requests sent again because no answer was logged. */
  replayedRequests: number;
  /** Calls of unknown outcome run again (idempotent tools). */
  rerunCalls: number;
  /** Calls of unknown outcome not run again (the model gets TOOL_OUTCOME_UNKNOWN). */
  unknownCalls: number;
}

const continued = new WeakMap<AgentImpl, ContinuedTurn>();

export function continueInterrupted(agent: AgentImpl, open: OpenTurn, inputs: ResumeInputs): void {
  const { awaitingApproval } = inputs;
  let rerunCalls = 0;
  let unknownCalls = 0;
  for (const [callId, call] of open.interrupted) {
    const decision = decideInterrupted(agent, call, awaitingApproval.has(callId));
    if (decision === 'rerun') rerunCalls += 1;
    else if (decision === 'unknown') unknownCalls += 1;
  }
  const replayedRequests = open.requestInFlight ? 1 : 0;
  const result = agent.continueOpenTurn(open, inputs);
  // A caller that never asks for the result (a child nobody waits for) must not leave a rejection unhandled.
  result.catch(() => undefined);
  continued.set(agent, { turn: open.turn, result, replayedRequests, rerunCalls, unknownCalls });
  const { hub } = agent.deps;
  if (hub.active && hub.isPublished(agent))
    hub.publish({
      ...baseOf(agent, hub.now()),
      type: 'recovered',
      turn: open.turn,
      replayedRequests,
      rerunCalls,
      unknownCalls,
    });
}

/** The turn a restore continued for `agent`, if any (read once: a later restore of the same session is a new one). */
export function continuedTurnOf(agent: AgentImpl): ContinuedTurn | undefined {
  return continued.get(agent);
}

/**
 * What a restored child is now working towards: the turn its restore continued, or the prompt a
 * crash left unclaimed (it runs now). `events` is the child's log as read before the restore.
 */
export function pendingResultOf(agent: AgentImpl, events: readonly SessionEvent[]): Promise<TurnResult> | undefined {
  const continuedTurn = continued.get(agent);
  if (continuedTurn !== undefined) return continuedTurn.result;
  const prompt = unclaimedPrompt(events);
  return prompt === undefined ? undefined : agent.inbox.result(prompt);
}

/** The first message, when no turn claimed it yet (the crash came between acceptance and turn start). */
export function unclaimedPrompt(events: readonly SessionEvent[]): string | undefined {
  let first: string | undefined;
  for (const logged of events) {
    const event = knownEvent(logged);
    if (event?.type === 'user/message' && first === undefined) first = event.data.id;
    if (event?.type === 'turn/start') return undefined;
  }
  return first;
}

/**
 * The last ended turn's result as its log shows it, when no turn is open after it: its output, its own
 * usage, its stop reason and diagnostic, and (a structured turn) the last valid structured value.
 */
export function endedResultOf(events: readonly SessionEvent[]): TurnResult | undefined {
  let ended: TurnResult | undefined;
  let turn: OpenTurn | undefined;
  let start = 0;
  events.forEach((logged, index) => {
    const event = knownEvent(logged);
    if (event?.type === 'turn/start') {
      start = index;
      ended = undefined;
    } else if (event?.type === 'turn/end') {
      // The turn as it stood just before its end: what openTurnOf reads of an open one.
      turn = openTurnOf(events.slice(start, index));
      const diagnostic = event.data.diagnostic === undefined ? {} : { diagnostic: event.data.diagnostic };
      const structured =
        turn?.outputSchema !== undefined && turn.structured ? { structured: turn.structured.value } : {};
      ended = {
        ...emptyTurnResult(event.data.reason),
        output: turn?.output ?? '',
        usage: turn?.usage ?? { inputTokens: 0, outputTokens: 0 },
        ...diagnostic,
        ...structured,
      };
    }
  });
  return ended;
}

export function emptyTurnResult(stopReason: StopReason): TurnResult {
  const usage = { inputTokens: 0, outputTokens: 0 };
  return {
    output: '',
    stopReason,
    usage,
    usageTree: { agentId: '', provider: '', model: '', usage, total: usage, children: [] },
  };
}
