/**
 * Runs drivers on the main thread with exactly the same driver and gateway code as the worker runner,
 * minus the thread: replies still go through the protocol's validation so behaviour is identical.
 */
import type { Driver } from '../driver/loop.js';
import { errorMessage } from '../errors.js';
import type { ModelProviderConfig } from '../models/types.js';
import { driverHostOver, type GatewayRemote } from '../wire/gateway.js';
import type { DriverPlan } from '../wire/protocol.js';
import type { Activation, ActivationEnd, DriverRunner } from '../wire/runner.js';
import { DriverFactory } from './driver-factory.js';

export class InlineRunner implements DriverRunner {
  readonly kind = 'inline' as const;
  private readonly drivers: DriverFactory;

  constructor(models: readonly ModelProviderConfig[]) {
    this.drivers = new DriverFactory(models);
  }

  activate(plan: DriverPlan, gateway: GatewayRemote): Activation {
    let driver: Driver | undefined;
    let cancelled: number | undefined | null = null;
    const done = (async (): Promise<ActivationEnd> => {
      try {
        driver = await this.drivers.create(plan, driverHostOver(gateway));
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
    this.drivers.close();
  }
}
