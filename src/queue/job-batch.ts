/**
 * The jobs a parent queues in one tick go to BullMQ together: `addBulk` sends them as one pipelined
 * write instead of one script call (a socket write in this process and a read in Redis) per job. A
 * fan-out dispatches its children's activations in bursts, so most of them share a batch.
 */
import type { Queue } from 'bullmq';
import type { JobData } from './job.js';

interface Pending {
  data: JobData;
  jobId: string;
  done: { resolve(): void; reject(error: unknown): void };
}

export class JobBatch {
  private pending: Pending[] = [];

  constructor(private readonly queue: () => Queue) {}

  /** Resolves once the job is in Redis; rejects with the batch's failure. */
  add(data: JobData, jobId: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.flush());
      this.pending.push({ data, jobId, done: { resolve, reject } });
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    const jobs = batch.map(({ data, jobId }) => ({
      name: 'activation',
      data,
      opts: { jobId, removeOnComplete: true, removeOnFail: true },
    }));
    this.queue()
      .addBulk(jobs)
      .then(
        () => {
          for (const { done } of batch) done.resolve();
        },
        (error: unknown) => {
          for (const { done } of batch) done.reject(error);
        },
      );
  }
}
