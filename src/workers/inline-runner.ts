/**
 * Runs drivers on the main thread with exactly the same driver and gateway code as the worker runner,
 * minus the thread: replies still go through the protocol's validation so behaviour is identical.
 */
import { Driver } from '../driver/loop.js';
import type { DriverPlan } from '../driver/types.js';
import { encodeError } from '../errors.js';
import { AdapterCache } from './adapter-cache.js';
import { driverHostOver, type GatewayRemote } from './gateway-client.js';
import type { ActivationOutcome } from './protocol.js';
import type { Activation, DriverRunner } from './runner.js';

export class InlineRunner implements DriverRunner {
  readonly kind = 'inline' as const;
  private readonly adapters = new AdapterCache();

  activate(plan: DriverPlan, gateway: GatewayRemote): Activation {
    let driver: Driver | undefined;
    let cancelled: number | undefined | null = null;
    const done = (async (): Promise<ActivationOutcome> => {
      try {
        driver = new Driver(plan, driverHostOver(gateway), await this.adapters.get(plan.model));
        if (cancelled !== null) driver.cancel(cancelled);
        await driver.runActivation();
        return { ok: true };
      } catch (error) {
        return { ok: false, error: encodeError(error) };
      }
    })();
    return {
      done,
      cancel: (turn) => {
        if (driver) driver.cancel(turn);
        else cancelled = turn;
      },
    };
  }

  async close(): Promise<void> {
    this.adapters.clear();
  }
}
