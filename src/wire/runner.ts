/** Where drivers run: pooled worker threads, or the main thread (baselines, debugging). */

import type { GatewayRemote } from './gateway.js';
import type { DriverPlan } from './protocol.js';

/**
 * How an activation ended. `recover`: the thread it shared died because of another driver (or the
 * culprit is unknown): the agent is re-planned from its session onto a healthy thread.
 */
export type ActivationEnd =
  | { kind: 'finished' }
  /** `neverStarted`: no driver ran the activation (cancelled while it waited for a thread): no model request was made. */
  | { kind: 'failed'; stopReason: 'error' | 'aborted'; diagnostic: string; neverStarted?: true }
  | { kind: 'recover' };

export interface Activation {
  /** Settles when the driver ran out of messages, failed or must be recovered; never rejects. */
  readonly done: Promise<ActivationEnd>;
  cancel(turn?: number): void;
  /** Hard-stops a driver that ignores cancellation, by recycling its thread (worker runner only). */
  forceStop(reason: string): void;
}

export interface DriverRunner {
  readonly kind: 'worker' | 'inline' | 'external' | 'queue';
  activate(plan: DriverPlan, gateway: GatewayRemote): Activation;
  close(): Promise<void>;
}
