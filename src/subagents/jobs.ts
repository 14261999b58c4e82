/**
 * Background one-shot runs owned by an agent (SPEC §11.6, runtime side). A job has its own
 * cancellation (the tool call that started it no longer owns it), tells its owner when it finished,
 * releases its child, and is cancelled when its owner is disposed.
 */
import { errorMessage } from '../errors.js';
import type { Agent, StopReason } from '../types.js';
import type { SubagentCore } from './core.js';
import type { Job, JobOptions, JobStatus, JobTable, SubagentResult, SubagentRun } from './types.js';

class JobRecord implements Job {
  readonly kind = 'subagent' as const;
  status: JobStatus = 'running';
  result: SubagentResult | undefined;
  done: Promise<void> = Promise.resolve();

  constructor(
    readonly id: string,
    readonly ownerId: string,
    readonly label: string,
    readonly controller: AbortController,
  ) {}
}

export function statusOf(stopReason: StopReason): JobStatus {
  if (stopReason === 'completed') return 'completed';
  if (stopReason === 'aborted') return 'killed';
  return 'failed';
}

/** Ids are unique per runtime, but jobs restored after a restart may be older: each owner's ids are its own. */
function keyOf(ownerId: string, jobId: string): string {
  return `${ownerId}\n${jobId}`;
}

export class Jobs implements JobTable {
  /** By owner id and job id. */
  private readonly jobs = new Map<string, JobRecord>();
  private counter = 0;

  constructor(private readonly core: SubagentCore) {}

  create(owner: Agent, run: SubagentRun, label: string, controller: AbortController, options: JobOptions = {}): Job {
    this.core.detachedRuns.add(run);
    const job = new JobRecord(this.idFor(owner.id, options.id), owner.id, label, controller);
    this.jobs.set(keyOf(owner.id, job.id), job);
    job.done = run.result
      .then(
        (result) => result,
        (error: unknown): SubagentResult => ({
          output: '',
          stopReason: 'error',
          diagnostic: errorMessage(error),
          usage: { inputTokens: 0, outputTokens: 0 },
        }),
      )
      .then(async (result) => {
        job.result = result;
        job.status = statusOf(result.stopReason);
        await run.dispose().catch(() => undefined);
        if (this.ownerGone(job))
          this.jobs.delete(keyOf(job.ownerId, job.id)); // nobody can read it any more
        else if (options.notifyOwner !== false) this.notifyOwner(job);
      });
    return job;
  }

  /** A fresh id, or an adopted one (later fresh ids count on from it, so none is given twice). */
  private idFor(ownerId: string, adopted: string | undefined): string {
    const number = adopted === undefined ? undefined : /^job_(\d+)$/.exec(adopted)?.[1];
    if (adopted === undefined || number === undefined || this.jobs.has(keyOf(ownerId, adopted)))
      return `job_${++this.counter}`;
    this.counter = Math.max(this.counter, Number(number));
    return adopted;
  }

  get(owner: Agent, jobId: string): Job | undefined {
    return this.jobs.get(keyOf(owner.id, jobId));
  }

  list(owner: Agent): Job[] {
    return [...this.jobs.values()].filter((job) => job.ownerId === owner.id);
  }

  kill(owner: Agent, jobId: string): boolean {
    const job = this.jobs.get(keyOf(owner.id, jobId));
    if (!job) return false;
    if (job.status !== 'running' && job.status !== 'stopping') return false;
    job.status = 'stopping';
    job.controller.abort();
    return true;
  }

  /**
   * Owner disposal cancels its jobs and releases their records (and with them each child's output):
   * finished ones now, running ones as soon as they finish. Only the owner could ever read them.
   */
  cancelOwnedBy(ownerId: string): void {
    for (const job of [...this.jobs.values()]) {
      if (job.ownerId !== ownerId) continue;
      if (job.status === 'running') {
        job.status = 'stopping';
        job.controller.abort();
      }
      if (job.result !== undefined) this.jobs.delete(keyOf(ownerId, job.id));
    }
  }

  /** How many job records the table holds (released ones are gone). */
  get size(): number {
    return this.jobs.size;
  }

  private ownerGone(job: JobRecord): boolean {
    const owner = this.core.agents.get(job.ownerId);
    return owner === undefined || owner.isDisposed;
  }

  private notifyOwner(job: JobRecord): void {
    const owner = this.core.agents.get(job.ownerId);
    if (!owner || owner.isDisposed) return;
    const text = `background job ${job.id} (subagent: ${job.label}) finished [status: ${job.status}]. Read its output with job_output.`;
    owner.accept({ message: text, source: 'job-completed' }).durable.catch((error: unknown) => {
      this.core.reportBackgroundError?.(`job notice for ${job.id}: ${errorMessage(error)}`);
    });
  }
}
