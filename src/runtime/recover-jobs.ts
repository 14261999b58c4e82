/**
 * Background jobs a crash interrupted after their parent had been told the job's id (the call's
 * result, `started background subagent job job_<n>`, is logged): the child is resumed and adopted
 * again as that job, so the parent's model can still read it (job_output) and its owner gets the
 * job's notice once, when the child is done.
 */
import type { AgentImpl } from '../agents/agent.js';
import { pendingResultOf } from '../agents/recovered-turn.js';
import { knownEvent } from '../sessions/event-types.js';
import { toSubagentResult } from '../subagents/runs.js';
import type { JobTable } from '../subagents/types.js';
import type { SessionEvent, SessionHeader } from '../types.js';

export type Session = { header: SessionHeader; events: SessionEvent[] };

export interface AnnouncedJob {
  childId: string;
  ownerId: string;
  jobId: string;
  label: string;
  /** The child's log as read before its restore. */
  events: SessionEvent[];
}

const ANNOUNCED = /^started background subagent job (job_\d+)$/;

/** One-shot children with work left whose parent's call answered with a job id. */
export function announcedJobs(sessions: readonly Session[], hasWork: (session: Session) => boolean): AnnouncedJob[] {
  const byId = new Map(sessions.map((session) => [session.header.id, session]));
  const jobs: AnnouncedJob[] = [];
  for (const session of sessions) {
    const ownerId = session.header.parentSession;
    const descriptor = descriptorOf(session.events);
    if (ownerId === undefined || descriptor?.mode !== 'one-shot' || typeof descriptor.callId !== 'string') continue;
    if (!hasWork(session)) continue;
    const answer = answerOf(byId.get(ownerId)?.events ?? [], descriptor.callId);
    const jobId = answer === undefined ? undefined : ANNOUNCED.exec(answer)?.[1];
    if (jobId === undefined) continue;
    const label = typeof descriptor.label === 'string' ? descriptor.label : '';
    jobs.push({ childId: session.header.id, ownerId, jobId, label, events: session.events });
  }
  return jobs;
}

/** The owner is live (restored first); the child is restored and becomes the job again. */
export function adoptJob(jobs: JobTable, owner: AgentImpl, child: AgentImpl, job: AnnouncedJob): void {
  const pending = pendingResultOf(child, job.events);
  if (pending === undefined) return;
  const controller = new AbortController();
  controller.signal.addEventListener('abort', () => child.isDisposed || child.cancel('parent'), { once: true });
  const run = { id: child.id, result: pending.then(toSubagentResult), dispose: () => child.dispose() };
  jobs.create(owner, run, job.label, controller, { id: job.jobId });
}

function descriptorOf(events: readonly SessionEvent[]): Record<string, unknown> | undefined {
  for (const logged of events) {
    const event = knownEvent(logged);
    if (event?.type === 'subagent/descriptor') return event.data;
  }
  return undefined;
}

function answerOf(events: readonly SessionEvent[], callId: string): string | undefined {
  for (const logged of events) {
    const event = knownEvent(logged);
    if (event?.type === 'tool/result' && event.data.callId === callId) return event.data.content;
  }
  return undefined;
}
