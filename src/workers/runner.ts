/** Where drivers run: pooled worker threads, or the main thread (baselines, debugging). */
import type { DriverPlan } from '../driver/types.js';
import type { GatewayRemote } from './gateway-client.js';
import type { ActivationOutcome } from './protocol.js';

export interface Activation {
  /** Settles when the driver ran out of messages or failed; never rejects. */
  readonly done: Promise<ActivationOutcome>;
  cancel(turn?: number): void;
}

export interface DriverRunner {
  readonly kind: 'worker' | 'inline';
  activate(plan: DriverPlan, gateway: GatewayRemote): Activation;
  close(): Promise<void>;
}
