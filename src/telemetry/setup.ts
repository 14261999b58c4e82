/** The runtime's Telemetry from createBrood's `telemetry` option and its model catalog. */
import type { ModelCatalog } from '../models/catalog.js';
import type { TelemetryOptions } from './options.js';
import { Telemetry } from './telemetry.js';

export function createTelemetry(
  options: TelemetryOptions,
  catalog: Pick<ModelCatalog, 'config'>,
  report: (message: string) => void,
  driver: string,
): Telemetry {
  const servers = new Map<string, { address: string; port: number } | undefined>();
  const serverOf = (provider: string) => {
    if (!servers.has(provider)) servers.set(provider, serverOfURL(catalog.config(provider)?.options.baseURL));
    return servers.get(provider);
  };
  return new Telemetry(options, { report, serverOf, driver });
}

/** server.address and server.port of an HTTP adapter's base URL (the scheme's port when none is written). */
export function serverOfURL(baseURL: unknown): { address: string; port: number } | undefined {
  if (typeof baseURL !== 'string') return undefined;
  try {
    const url = new URL(baseURL);
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    return { address: url.hostname, port };
  } catch {
    return undefined;
  }
}
