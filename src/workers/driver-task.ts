/**
 * What a pool thread runs for one activation of one agent: validate the plan, connect the gateway,
 * load the model adapter (cached per thread), run the driver until the parent has no message left.
 */
import { threadId, type MessagePort } from 'node:worker_threads';
import { codeRunner } from '../driver/code-sandbox.js';
import { runWatched } from './thread-watch.js';
import { Driver } from '../driver/loop.js';
import type { DriverPlan } from '../driver/types.js';
import { encodeError } from '../errors.js';
import { Piscina } from 'piscina';
import type { ModelProviderConfig } from '../models/types.js';
import { AdapterCache } from './adapter-cache.js';
import { GatewayClient } from './gateway-client.js';
import { driverControlSchema, driverTaskSchema, type ActivationOutcome } from './protocol.js';

/** Built on the first task: the provider configs come once per thread, as the pool's workerData. */
let threadAdapters: AdapterCache | undefined;

function poolModels(): ModelProviderConfig[] {
  return (Piscina.workerData as { models?: ModelProviderConfig[] } | undefined)?.models ?? [];
}

/** `models` defaults to the pool's workerData; passing them runs a task outside a pool (tests). */
function adaptersFor(models: ModelProviderConfig[] | undefined): AdapterCache {
  if (models) return new AdapterCache(models);
  threadAdapters ??= new AdapterCache(poolModels());
  return threadAdapters;
}

export async function runDriverTask(input: unknown, models?: ModelProviderConfig[]): Promise<ActivationOutcome> {
  const parsed = driverTaskSchema.safeParse(input);
  if (!parsed.success) return { ok: false, error: { code: 'INTERNAL', message: `malformed driver task: ${parsed.error.message}` } };
  const { port } = parsed.data;
  const plan = parsed.data.plan as unknown as DriverPlan;
  const gateway = new GatewayClient(port);
  try {
    const run = async (): Promise<void> => {
      const driver = new Driver(plan, gateway.host, await adaptersFor(models).get(plan.route.provider), { runCode: codeRunner(plan, gateway.host) });
      listenForControl(port, driver);
      await driver.runActivation();
    };
    if (plan.watch) {
      Atomics.store(new Int32Array(plan.watch.threadCell), 0, threadId);
      await runWatched(plan.watch.board, plan.watch.token, run);
    } else {
      await run();
    }
    return { ok: true };
  } catch (error) {
    return { ok: false, error: encodeError(error) };
  } finally {
    gateway.release();
    port.close();
  }
}

function listenForControl(port: MessagePort, driver: Driver): void {
  port.on('message', (message: unknown) => {
    const control = driverControlSchema.safeParse(message);
    if (control.success) driver.cancel(control.data.turn);
  });
}
