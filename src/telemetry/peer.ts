/**
 * @opentelemetry/api is an optional peer. createBrood is synchronous, so the check that it is
 * installed is synchronous (resolution only) and the module itself arrives through `import()`:
 * createAgent and resumeAgent wait for it, so every agent that can run a turn finds it loaded and
 * `agent.run()` can read the host's active context synchronously, before its first await.
 */
import type * as OtelApi from '@opentelemetry/api';
import { BroodError, errorCodeOf } from '../errors.js';
import { requireOptionalPeers } from '../util/optional-peers.js';

export type Otel = typeof OtelApi;

/** Throws INVALID_CONFIG naming the package when `telemetry` is configured without it. */
export function requireTelemetryPeer(): void {
  try {
    requireOptionalPeers('createBrood telemetry', 'telemetry');
  } catch (error) {
    if (errorCodeOf(error) !== 'MISSING_DEPENDENCY') throw error;
    throw new BroodError('INVALID_CONFIG', (error as Error).message, {
      details: (error as BroodError).details,
    });
  }
}

export async function loadTelemetryApi(): Promise<Otel> {
  const api = (await import('@opentelemetry/api')) as Otel & { default?: Otel };
  // The CommonJS build seen through ESM interop puts the namespace on `default` under some loaders.
  return typeof api.context?.active === 'function' ? api : (api.default ?? api);
}
