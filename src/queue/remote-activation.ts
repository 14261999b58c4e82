/**
 * What the queue runner (queue-runner.ts) keeps of one activation that runs on a `brood host`, and the
 * sweep that re-plans those whose job was lost before any host bound them.
 */
import type { Queue } from 'bullmq';
import type { PlacedActivation } from '../pool/driver-link.js';
import type { HostLink } from './host-link.js';
import type { JobData } from './job.js';

export interface RemoteActivation extends PlacedActivation {
  jobId: string;
  cells: Int32Array[];
  sentCells: number[];
  /** The host's link, once its hello bound the activation there (or it was placed there). */
  host?: HostLink;
  /** Placed on `host` with a `place` frame, and not confirmed by its hello yet. */
  placed?: boolean;
  /** What a host runs: sent as a job, or in a `place` frame (then kept, to be queued if the host is full). */
  job?: JobData;
  cancelled?: { turn?: number };
  stopped?: string;
  dispatchedAt?: number;
}

/**
 * A queued job that no host holds any more (Redis restarted without it, or its host died before
 * its hello arrived and BullMQ failed it as stalled) would wait forever, and so would one a host
 * took and then went silent on before its hello (a host stopped, wedged or partitioned right after
 * taking it: BullMQ keeps it active while that host's lock lives). Both are re-planned (`recovered`
 * is told first); a hello that comes later names an activation that no longer exists and is told `gone`.
 */
export async function recoverLostJobs(
  queue: Queue,
  live: ReadonlyMap<number, RemoteActivation>,
  before: number,
  recovered: () => void,
): Promise<void> {
  const waiting = [...live.values()].filter(
    (entry) => !entry.host && entry.dispatchedAt !== undefined && entry.dispatchedAt < before,
  );
  for (const entry of waiting) {
    const job = await queue.getJob(entry.jobId).catch(() => null);
    const state = job ? await job.getState().catch(() => 'error') : 'unknown';
    if (entry.host || live.get(entry.token) !== entry) continue;
    const takenAndSilent = state === 'active' && (job?.processedOn ?? Number.POSITIVE_INFINITY) < before;
    if (state === 'unknown' || state === 'completed' || state === 'failed' || takenAndSilent) {
      recovered();
      entry.settle({ kind: 'recover' });
    }
  }
}
