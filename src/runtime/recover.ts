/**
 * brood.recover(): every top-level session of the store whose last turn a crash left open is resumed
 * (its children inside it, through its delegation calls); every top-level session with accepted,
 * unclaimed messages runs them, as resumeAgent does; interrupted background work whose owner had
 * been answered (continuable children, announced jobs) is woken with its owner. The whole store is
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
import type { JobTable } from '../subagents/types.js';
import type { RecoveredTurn, RecoverOptions, SessionStore } from '../types.js';
import { type AnnouncedJob, adoptJob, announcedJobs, type Session } from './recover-jobs.js';
import type { Runtime } from './runtime.js';

export type { RecoveredTurn, RecoverOptions } from '../types.js';

export interface RecoverHost {
  store: SessionStore;
  agents: ReadonlyMap<string, AgentImpl>;
  restore(sessionId: string): Promise<AgentImpl>;
  /** Background jobs, for those a crash interrupted after their id was announced. */
  jobs: JobTable;
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
    jobs: runtime.subagents.jobs,
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
    ...interruptedContinuables(sessions).map((chain) => restoreInOrder(host, chain)),
    ...announcedJobs(sessions, hasWork).map((job) => resumeJob(host, sessions, job)),
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
 * Continuable children a crash interrupted (an open turn, or accepted messages no turn took) whose
 * parent had already been answered: nothing else would wake them. Each comes with its ancestors,
 * top-level first, so its settlement notice finds its parent live. Only chains of top-level and
 * continuable agents: a one-shot child that had finished is not brought back to take a notice.
 */
function interruptedContinuables(sessions: Session[]): string[][] {
  const byId = new Map(sessions.map((session) => [session.header.id, session]));
  const chains: string[][] = [];
  for (const session of sessions) {
    if (session.header.parentSession === undefined || !continuable(session) || !hasWork(session)) continue;
    const chain = [session.header.id];
    let parent = byId.get(session.header.parentSession);
    while (parent !== undefined && parent.header.parentSession !== undefined && continuable(parent)) {
      chain.unshift(parent.header.id);
      parent = byId.get(parent.header.parentSession);
    }
    if (parent?.header.parentSession === undefined && parent !== undefined) chains.push([parent.header.id, ...chain]);
  }
  return chains;
}

async function restoreInOrder(host: RecoverHost, chain: string[]): Promise<void> {
  for (const id of chain) await host.restore(id);
}

/** A job's owner must be able to take its notice: a top-level agent or a continuable child (and its chain). */
async function resumeJob(host: RecoverHost, sessions: Session[], job: AnnouncedJob): Promise<void> {
  const chain = ownerChain(sessions, job.ownerId);
  if (chain === undefined) return;
  await restoreInOrder(host, chain);
  const owner = host.agents.get(job.ownerId);
  if (owner === undefined) return;
  adoptJob(host.jobs, owner, await host.restore(job.childId), job);
}

/** The owner with its ancestors, top-level first, when each below the top is continuable. */
function ownerChain(sessions: Session[], ownerId: string): string[] | undefined {
  const byId = new Map(sessions.map((session) => [session.header.id, session]));
  const chain: string[] = [];
  for (let at = byId.get(ownerId); at !== undefined; at = byId.get(at.header.parentSession ?? '')) {
    chain.unshift(at.header.id);
    if (at.header.parentSession === undefined) return chain;
    if (!continuable(at)) return undefined;
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
