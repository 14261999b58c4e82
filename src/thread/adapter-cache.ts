/**
 * Adapters by model provider id, reused across drivers that share a thread (HTTP keep-alive, parsed
 * scripts). The provider configs arrive once per thread (piscina workerData, or the runner's own list
 * inline), so plans name a provider instead of carrying — and cloning — its whole config.
 */
import { BroodError } from '../errors.js';
import { loadAdapter } from '../models/adapters.js';
import type { ModelAdapter, ModelProviderConfig } from '../models/types.js';

export class AdapterCache {
  private readonly adapters = new Map<string, Promise<ModelAdapter>>();
  private readonly configs: Map<string, ModelProviderConfig>;

  constructor(configs: readonly ModelProviderConfig[]) {
    this.configs = new Map(configs.map((config) => [config.id, config]));
  }

  get(provider: string): Promise<ModelAdapter> {
    const key = provider;
    let adapter = this.adapters.get(key);
    if (adapter === undefined) {
      const config = this.configs.get(provider);
      if (!config)
        return Promise.reject(new BroodError('UNKNOWN_MODEL', `no model provider '${provider}' in this runtime`));
      adapter = loadAdapter(config);
      this.adapters.set(key, adapter);
      // A failed load is not cached: the next driver retries.
      adapter.catch(() => this.adapters.delete(key));
    }
    return adapter;
  }

  clear(): void {
    this.adapters.clear();
  }
}
