/**
 * brood.recover(): every top-level session of the store whose last turn a crash left open is resumed
 * (its children inside it, through its delegation calls); every top-level session with accepted,
 * unclaimed messages runs them, as resumeAgent does; interrupted background work whose owner had
 * been answered (continuable children, announced jobs, job notices a crash kept from being written)
 * is woken with its owner. The whole store is
 * read first: a corrupt session (SESSION_CORRUPT, naming file and line) means nothing is resumed.
 */
import type { AgentImpl } from '../agents/agent.js';
import { rebuildSession } from '../agents/history.js';
import { openTurnOf } from '../agents/open-turn.js';
import { continuedTurnOf } from '../agents/recovered-turn.js';
import { endedForMissingRoute } from '../agents/restore.js';
import { checkContext } from '../agents/signals.js';
import { parseConfig, resumeAgentOptionsSchema } from '../config.js';
import { BroodError } from '../errors.js';
import { settlementNotice } from '../subagents/runs.js';
import type { RecoveredTurn, RecoverOptions, SessionStore } from '../types.js';
import { jobNeedsOwner, type LoggedJob, loggedJobOf, loggedJobs, type Session } from './recover-jobs.js';
import { type LostSettlement, lostSettlement } from './recover-notices.js';
import type { Runtime } from './runtime.js';

export type { RecoveredTurn, RecoverOptions } from '../types.js';

export interface RecoverHost {
  store: SessionStore;
  agents: ReadonlyMap<string, AgentImpl>;
  /** Restoring an owner also rebuilds the jobs its log announced (src/runtime/recover-jobs.ts). */
  restore(sessionId: string): Promise<AgentImpl>;
}

/** brood.recover(options): checked like resumeAgent's options (a signal and a context, nothing else). */
export async function recover(runtime: Runtime, options: unknown): Promise<RecoveredTurn[]> {
  runtime.assertOpen();
  const { signal, context } = parseConfig(recoverOptionsSchema, options ?? {}, 'recover options');
  checkContext(context, 'recover options');
  await runtime.agentDeps.hub.telemetry?.ready();
  const host: RecoverHost = {
    store: runtime.store,
    agents: runtime.agents,
    // Every turn recovery runs reads the context the host gave again (children through their parents' calls).
    restore: (id) => runtime.restore(id, context === undefined ? {} : { context }),
  };
  return recoverSessions(host, signal === undefined ? {} : { signal });
}

const recoverOptionsSchema = resumeAgentOptionsSchema.pick({ signal: true, context: true });

export async function recoverSessions(host: RecoverHost, options: RecoverOptions): Promise<RecoveredTurn[]> {
  const { store } = host;
  const headers = await store.list();
  // Every session is read (and so checked) before anything is resumed.
  const sessions = await Promise.all(headers.map((header) => store.read(header.id)));
  throwIfAborted(options.signal);
  const due = sessions.filter(
    (session) => session.header.parentSession === undefined && !host.agents.has(session.header.id) && hasWork(session),
  );
  const settled = await Promise.allSettled(due.map(({ header }) => host.restore(header.id)));
  const waking = await Promise.allSettled([
    ...backgroundWork(sessions).map((chain) => restoreInOrder(host, chain)),
    ...lostSettlements(sessions).map((lost) => deliverSettlement(host, lost)),
  ]);
  const recovered: RecoveredTurn[] = [];
  let failure: unknown;
  for (const outcome of settled) {
    if (outcome.status === 'rejected') {
      // A route gone from the catalog failed that session's turn (logged); the others go on.
      if (!endedForMissingRoute(outcome.reason)) failure ??= outcome.reason;
      continue;
    }
    const continued = continuedTurnOf(outcome.value);
    if (continued !== undefined)
      recovered.push({ agent: outcome.value, turn: continued.turn, result: continued.result });
  }
  for (const outcome of waking)
    if (outcome.status === 'rejected' && !endedForMissingRoute(outcome.reason)) failure ??= outcome.reason;
  if (failure !== undefined) throw failure;
  return recovered;
}

/**
 * Background work a crash interrupted whose owner had already been answered, so nothing else would
 * wake it, each as the chain of sessions to restore, top-level first (an owner is live before its
 * child's notice or report can reach it):
 * - a continuable child with work left (an open turn, or accepted messages no turn took), with its
 *   ancestors; if one of them is gone for good (a one-shot child that had finished), the child alone,
 *   as it went on without it (its notice then finds no live parent, as it would have);
 * - the owner of an announced background job whose child has work left or finished without its notice
 *   written: restoring the owner rebuilds its jobs. A one-shot owner that had finished is not brought
 *   back: its end would have stopped its jobs.
 */
function backgroundWork(sessions: Session[]): string[][] {
  const byId = new Map(sessions.map((session) => [session.header.id, session]));
  const chains: string[][] = [];
  const jobsOf = new Map<Session, LoggedJob[]>();
  for (const session of sessions) {
    const ownerId = session.header.parentSession;
    if (ownerId === undefined) continue;
    if (continuable(session)) {
      if (hasWork(session)) chains.push(chainTo(byId, session.header.id) ?? [session.header.id]);
      continue;
    }
    const owner = byId.get(ownerId);
    if (owner === undefined) continue;
    const ownerJobs = jobsOf.get(owner) ?? loggedJobs(owner.events);
    jobsOf.set(owner, ownerJobs);
    const job = loggedJobOf(session, ownerJobs);
    if (job === undefined || !jobNeedsOwner(session, job, hasWork)) continue;
    const chain = chainTo(byId, ownerId);
    if (chain !== undefined) chains.push(chain);
  }
  return chains;
}

/**
 * Settlement notices a crash kept from being written (src/runtime/recover-notices.ts), each with the
 * chain of sessions that makes its parent live: none when the parent is gone for good (a one-shot child
 * that had finished), as the notice would have found no live parent.
 */
function lostSettlements(sessions: Session[]): (LostSettlement & { chain: string[] })[] {
  const byId = new Map(sessions.map((session) => [session.header.id, session]));
  const lost: (LostSettlement & { chain: string[] })[] = [];
  for (const session of sessions) {
    const parent = byId.get(session.header.parentSession ?? '');
    if (parent === undefined || !continuable(session) || hasWork(session)) continue;
    const owed = lostSettlement(session, parent);
    const chain = owed && chainTo(byId, owed.parentId);
    if (owed !== undefined && chain !== undefined) lost.push({ ...owed, chain });
  }
  return lost;
}

async function deliverSettlement(host: RecoverHost, lost: LostSettlement & { chain: string[] }): Promise<void> {
  await restoreInOrder(host, lost.chain);
  const parent = host.agents.get(lost.parentId);
  if (parent === undefined || parent.isDisposed) return;
  await parent.accept({
    message: settlementNotice(lost.childId, lost.last),
    source: 'subagent-settled',
    settles: { childId: lost.childId, turn: lost.turn },
  }).durable;
}

async function restoreInOrder(host: RecoverHost, chain: string[]): Promise<void> {
  for (const id of chain) await host.restore(id);
}

/**
 * The session with its ancestors, top-level first, when each below the top is resumed by recovery:
 * a continuable child, or a one-shot child whose turn is open (its parent's call resumes it).
 */
function chainTo(byId: ReadonlyMap<string, Session>, id: string): string[] | undefined {
  const chain: string[] = [];
  for (let at = byId.get(id); at !== undefined; at = byId.get(at.header.parentSession ?? '')) {
    chain.unshift(at.header.id);
    if (at.header.parentSession === undefined) return chain;
    if (!continuable(at) && openTurnOf(at.events) === undefined) return undefined;
  }
  return undefined;
}

function continuable(session: Session): boolean {
  return session.events.some((event) => event.type === 'subagent/descriptor' && event.data.mode === 'continuable');
}

function hasWork({ events }: Session): boolean {
  return openTurnOf(events) !== undefined || rebuildSession(events).unclaimed.length > 0;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new BroodError('ABORTED', 'recover was aborted; nothing was resumed');
}
