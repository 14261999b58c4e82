/**
 * A turn its driver left open — the driver's thread died, or it was stopped by force — is closed here
 * from what the parent logged, so the turn's run() settles and the session stays well-formed (SPEC §6).
 */
import { awaitingModel } from '../models/history-tail.js';
import type { ChatMessage } from '../models/types.js';
import type { TurnResult, Usage, UsageNode } from '../types.js';
import type { ActivationEnd } from '../wire/runner.js';
import type { CurrentTurn, TurnLedger } from './turns.js';

export const NO_USAGE: Usage = { inputTokens: 0, outputTokens: 0 };

/** The agent as closing its turn needs it: the turn ledger and the parent's mirror of the history. */
export interface StoppedTurnAgent {
  readonly turns: TurnLedger;
  readonly history: readonly ChatMessage[];
}

export async function closeStoppedTurn(agent: StoppedTurnAgent, turn: CurrentTurn, end: ActivationEnd): Promise<void> {
  const failed = end.kind === 'failed' ? end : { stopReason: 'aborted' as const, diagnostic: 'the driver stopped' };
  // Cancelled before any driver ran it: it ends as a driver ends a cancelled turn (no request to close).
  const neverStarted = end.kind === 'failed' && end.neverStarted === true;
  if (!neverStarted) recordFailedRequest(agent, turn);
  const report = { turn: turn.turn, output: '', stopReason: failed.stopReason, usage: NO_USAGE };
  await agent.turns.finish(neverStarted ? report : { ...report, diagnostic: failed.diagnostic }, turn);
}

/**
 * A request that a dead or force-stopped driver never answered still gets its `assistant/message`
 * with `finish: 'error'` (SPEC §6), so the history stays well-formed and the next turn does not
 * replay the failed step (a scripted fault turn would otherwise run again on every later turn).
 */
function recordFailedRequest(agent: StoppedTurnAgent, turn: CurrentTurn): void {
  if (turn.lastFinish !== undefined && turn.lastFinish !== 'tool-calls') return; // the step had ended
  if (!awaitingModel(agent.history)) return;
  agent.turns.recordUnansweredRequest(turn);
}

/** What a message still queued when its agent is disposed resolves to. */
export function disposedResult(identity: Pick<UsageNode, 'agentId' | 'label' | 'provider' | 'model'>): TurnResult {
  return {
    output: '',
    stopReason: 'aborted',
    usage: NO_USAGE,
    usageTree: { ...identity, usage: NO_USAGE, total: NO_USAGE, children: [] },
    diagnostic: 'the agent was disposed',
  };
}
