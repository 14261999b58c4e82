/**
 * What every driver host does to start one activation's driver: load the route's model adapter (once
 * per host and provider) and give the driver Code Mode over the host's sandbox threads. The thread
 * host (one per pool thread) and the inline runner (the main thread) each own one.
 */
import { threadId } from 'node:worker_threads';
import { codeRunner } from '../code-mode/run-code.js';
import { SandboxPool } from '../code-mode/sandbox-pool.js';
import { Driver } from '../driver/loop.js';
import type { ModelProviderConfig } from '../models/types.js';
import type { DriverGateway } from '../wire/gateway.js';
import type { DriverPlan } from '../wire/protocol.js';
import { AdapterCache } from './adapter-cache.js';

const NATIVE_HOOKS = Object.freeze({ threadId });

export class DriverFactory {
  private readonly adapters: AdapterCache;
  /** run_code sandbox threads of this host, shared by its drivers (a program holds one at a time). */
  private readonly sandboxes = new SandboxPool();

  constructor(models: readonly ModelProviderConfig[]) {
    this.adapters = new AdapterCache(models);
  }

  async create(plan: DriverPlan, host: DriverGateway): Promise<Driver> {
    const adapter = await this.adapters.get(plan.route.provider);
    // A driver without Code Mode never runs a program: it holds no runner for one.
    if (plan.codeMode === 'native') return new Driver(plan, host, adapter, NATIVE_HOOKS);
    return new Driver(plan, host, adapter, { runCode: codeRunner(plan, host, this.sandboxes), threadId });
  }

  close(): void {
    this.adapters.clear();
    this.sandboxes.close();
  }
}
