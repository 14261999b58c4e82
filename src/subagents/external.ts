/**
 * The seam for brood's own out-of-process providers (ACP). Such a provider cannot enforce persona,
 * filters or depth inside the external agent, but its children are still brood children: published
 * through the same unpublished setup (header with depth and parent, descriptor, lifecycle events), with
 * a session recorded from what the external agent reports. What differs is who serves the child's
 * turns: instead of the brood driver on a pool thread, an activation that forwards each claimed
 * message to the external agent and logs its reported transcript through the same gateway.
 *
 * Keyed by a module-private symbol so third-party code does not reach it by accident; not public API.
 */
import type { DriverRunner } from '../wire/runner.js';

export const EXTERNAL_DRIVER: unique symbol = Symbol('brood.externalDriver');

export interface ExternalDriver {
  /** Serves this one child's activations (a fresh object per child). */
  runner: DriverRunner;
  /** Extra descriptor fields recorded in the child's session (e.g. the external session id). */
  descriptor: Record<string, unknown>;
}

/** A provider that can rebuild the driver of a child it ran before (cold resume from the session). */
export interface ExternalRestorer {
  restoreDriver(childId: string, descriptor: Record<string, unknown>): DriverRunner;
}

export const EXTERNAL_RESTORER: unique symbol = Symbol('brood.externalRestorer');

export function externalDriverOf(value: object | undefined): ExternalDriver | undefined {
  return (value as { [EXTERNAL_DRIVER]?: ExternalDriver } | undefined)?.[EXTERNAL_DRIVER];
}

export function externalRestorerOf(provider: object | undefined): ExternalRestorer | undefined {
  return (provider as { [EXTERNAL_RESTORER]?: ExternalRestorer } | undefined)?.[EXTERNAL_RESTORER];
}
