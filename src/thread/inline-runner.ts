/**
 * Runs drivers on the main thread with exactly the same driver and gateway code as the worker runner,
 * minus the thread: replies still go through the protocol's validation so behaviour is identical.
 */
import { codeRunner } from '../code-mode/run-code.js';
import { SandboxPool } from '../code-mode/sandbox-pool.js';
import { Driver } from '../driver/loop.js';
import type { DriverPlan } from '../wire/contract.js';
import { errorMessage } from '../errors.js';
import type { ModelProviderConfig } from '../models/types.js';
import { AdapterCache } from './adapter-cache.js';
import { driverHostOver, type GatewayRemote } from './gateway-client.js';
import type { Activation, ActivationEnd, DriverRunner } from '../wire/runner.js';

export class InlineRunner implements DriverRunner {
  readonly kind = 'inline' as const;
  private readonly adapters: AdapterCache;
  private readonly sandboxes = new SandboxPool();

  constructor(models: readonly ModelProviderConfig[]) {
    this.adapters = new AdapterCache(models);
  }

  activate(plan: DriverPlan, gateway: GatewayRemote): Activation {
    let driver: Driver | undefined;
    let cancelled: number | undefined | null = null;
    const done = (async (): Promise<ActivationEnd> => {
      try {
        const host = driverHostOver(gateway);
        driver = new Driver(plan, host, await this.adapters.get(plan.route.provider), {
          runCode: codeRunner(plan, host, this.sandboxes),
        });
        if (cancelled !== null) driver.cancel(cancelled);
        await driver.runActivation();
        return { kind: 'finished' };
      } catch (error) {
        return { kind: 'failed', stopReason: 'error', diagnostic: errorMessage(error) };
      }
    })();
    return {
      done,
      cancel: (turn) => {
        if (driver) driver.cancel(turn);
        else cancelled = turn;
      },
      // A driver on the main thread cannot be stopped by force: that is the isolation 'inline' gives up.
      forceStop: () => undefined,
    };
  }

  async close(): Promise<void> {
    this.adapters.clear();
    this.sandboxes.close();
  }
}
