/** Adapters are reused across drivers that share a thread (HTTP keep-alive, parsed scripts). */
import { loadAdapter } from '../models/adapters.js';
import type { ModelAdapter, ModelProviderConfig } from '../models/types.js';

export class AdapterCache {
  private readonly adapters = new Map<string, Promise<ModelAdapter>>();

  get(config: ModelProviderConfig): Promise<ModelAdapter> {
    const key = JSON.stringify(config);
    let adapter = this.adapters.get(key);
    if (adapter === undefined) {
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
