/**
 * brood.recover(): every top-level session of the store whose last turn a crash left open is resumed
 * (its children inside it, through its delegation calls), and every top-level session with accepted,
 * unclaimed messages runs them, as resumeAgent does. The whole store is read first: a corrupt session
 * (SESSION_CORRUPT, naming file and line) means nothing is resumed from it.
 */
import type { AgentImpl } from '../agents/agent.js';
import { rebuildSession } from '../agents/history.js';
import { openTurnOf } from '../agents/open-turn.js';
import { continuedTurnOf } from '../agents/recovered-turn.js';
import { BroodError } from '../errors.js';
import type { Agent, SessionStore, TurnResult } from '../types.js';

export interface RecoveredTurn {
  agent: Agent;
  /** The interrupted turn, continued. */
  turn: number;
  result: Promise<TurnResult>;
}

export interface RecoverOptions {
  signal?: AbortSignal;
}

export interface RecoverHost {
  store: SessionStore;
  agents: ReadonlyMap<string, AgentImpl>;
  restore(sessionId: string): Promise<AgentImpl>;
}

export async function recoverSessions(host: RecoverHost, options: RecoverOptions): Promise<RecoveredTurn[]> {
  const { store } = host;
  const headers = await store.list();
  // Every session is read (and so checked) before anything is resumed.
  const sessions = await Promise.all(headers.map((header) => store.read(header.id)));
  throwIfAborted(options.signal);
  const due = sessions.filter(
    ({ header, events }) =>
      header.parentSession === undefined &&
      !host.agents.has(header.id) &&
      (openTurnOf(events) !== undefined || rebuildSession(events).unclaimed.length > 0),
  );
  const settled = await Promise.allSettled(due.map(({ header }) => host.restore(header.id)));
  const recovered: RecoveredTurn[] = [];
  let failure: unknown;
  for (const outcome of settled) {
    if (outcome.status === 'rejected') {
      // A route gone from the catalog failed that session's turn (logged); the others go on.
      if (!isRouteFailure(outcome.reason)) failure ??= outcome.reason;
      continue;
    }
    const continued = continuedTurnOf(outcome.value);
    if (continued !== undefined)
      recovered.push({ agent: outcome.value, turn: continued.turn, result: continued.result });
  }
  if (failure !== undefined) throw failure;
  return recovered;
}

function isRouteFailure(error: unknown): boolean {
  return error instanceof BroodError && error.code === 'UNKNOWN_MODEL';
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new BroodError('ABORTED', 'recover was aborted; nothing was resumed');
}
