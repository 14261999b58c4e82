/**
 * Drivers in pooled worker threads (SPEC §10). One piscina task per activation; the task receives the
 * plan and one end of a fresh MessageChannel, over which the parent's gateway is exposed with comlink.
 * Atomics are disabled so ports keep delivering between tasks; many drivers share a thread because
 * they mostly wait (on the model or on the parent), and a task never holds capacity a child needs.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { MessageChannel, type ResourceLimits } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { Piscina } from 'piscina';
import { BroodError, errorMessage } from '../errors.js';
import type { DriverPlan } from '../driver/types.js';
import type { GatewayRemote } from './gateway-client.js';
import { activationOutcomeSchema, type ActivationOutcome } from './protocol.js';
import type { Activation, DriverRunner } from './runner.js';

export interface WorkerRunnerOptions {
  threads?: number;
  idleTimeoutMs?: number;
  resourceLimits?: ResourceLimits;
}

/** Far above any realistic fan-out: drivers are async and mostly idle, so a thread hosts many. */
const TASKS_PER_THREAD = 1_000_000;

export class WorkerRunner implements DriverRunner {
  readonly kind = 'worker' as const;
  private readonly pool: Piscina;

  constructor(options: WorkerRunnerOptions = {}) {
    const threads = options.threads ?? Math.max(1, availableParallelism());
    this.pool = new Piscina({
      filename: locateWorkerEntry(),
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: options.idleTimeoutMs ?? 30_000,
      atomics: 'disabled',
      concurrentTasksPerWorker: TASKS_PER_THREAD,
      maxQueue: Number.POSITIVE_INFINITY,
      resourceLimits: options.resourceLimits ?? { maxOldGenerationSizeMb: 1024 },
    });
  }

  activate(plan: DriverPlan, gateway: GatewayRemote): Activation {
    const { port1, port2 } = new MessageChannel();
    Comlink.expose(gateway, nodeEndpoint(port1));
    // Listened for from the start: the worker usually closes its end first, and that closes ours too.
    const closed = new Promise<void>((resolve) => port1.once('close', () => resolve()));
    const done = this.pool
      .run({ plan, port: port2 }, { transferList: [port2] })
      .then(parseOutcome, (error: unknown): ActivationOutcome => ({
        ok: false,
        error: { code: 'WORKER_CRASHED', message: `the driver's worker thread died: ${errorMessage(error)}` },
      }))
      .finally(() => {
        port1.close();
        // Settle only once the port's handle is gone, so an idle runtime holds no handle of a finished agent (SPEC §10.7).
        return closed;
      });
    return {
      done,
      cancel: (turn) => port1.postMessage(turn === undefined ? { control: 'cancel' } : { control: 'cancel', turn }),
    };
  }

  get threads(): number {
    return this.pool.threads.length;
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}

function parseOutcome(raw: unknown): ActivationOutcome {
  const outcome = activationOutcomeSchema.safeParse(raw);
  return outcome.success ? outcome.data : { ok: false, error: { code: 'INTERNAL', message: 'a driver task returned a malformed outcome' } };
}

/**
 * The built worker entry sits next to the built library (dist/workers/driver.js). When brood runs
 * from source (tests import src/), the entry is taken from the build in dist/.
 */
function locateWorkerEntry(): string {
  const candidates = [new URL('./workers/driver.js', import.meta.url), new URL('../../dist/workers/driver.js', import.meta.url)];
  for (const candidate of candidates) {
    if (candidate.protocol === 'file:' && existsSync(fileURLToPath(candidate))) return candidate.href;
  }
  throw new BroodError('INVALID_CONFIG', 'cannot find the built worker entry (dist/workers/driver.js); run `npm run build` first');
}
