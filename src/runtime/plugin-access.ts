/**
 * What brood's own plugins (subagentTool, jobTools, messageTools, mcpTools, ...) may ask of the runtime
 * beyond the public `Brood` surface, named and typed. A plugin gets it with `pluginAccess(brood)`; the
 * lookup is a module-private WeakMap filled by the facade, so host code holding a `Brood` cannot reach
 * the engine by accident and nothing here is part of the public API.
 */
import type { AgentImpl } from '../agents/agent.js';
import { BroodError } from '../errors.js';
import type { JobTable, MountHook } from '../subagents/types.js';
import type { Agent } from '../types.js';
import { type Disposer, makeDisposer } from '../util/disposer.js';
import type { Runtime } from './runtime.js';

export interface PluginAccess {
  /** The runtime's background-job table (one-shot background delegations). */
  readonly jobs: JobTable;
  /** Every tool name the global layer knows (registered or reserved). */
  globalToolNames(): string[];
  /** The runtime's own object for a public Agent (undefined for foreign objects). */
  agentImpl(agent: Agent | undefined): AgentImpl | undefined;
  /** Mount hooks see the providers registered so far immediately (replayed through `added`). */
  addMountHook(hook: MountHook): Disposer;
  /** Who holds a plugin-wide reservation (a delegation tool name, the list_subagent_models owner). */
  reservationHolder(key: string): string | undefined;
  /** Takes a plugin-wide reservation; throws INTERNAL if it is held (callers check the holder first to word the error). */
  reserve(key: string, holder: string): Disposer;
  /**
   * Installs `key` once per runtime: the first acquirer runs `install`, later ones only count. The
   * returned disposer releases one reference; the last release uninstalls. A failing first install
   * leaves no entry behind.
   */
  acquireShared(key: string, install: () => () => void): Disposer;
  /** The runtime delivers no settlement notice to this agent: a parent that never calls a model (mcpServer's). */
  quietParent(agent: Agent): void;
  /** The one-shot start made with this signal is for a background job (its `subagent-start` event says so). */
  markBackgroundStart(signal: AbortSignal): void;
}

const hosts = new WeakMap<object, { host: PluginAccess; runtime: Runtime }>();

export function pluginAccess(brood: object): PluginAccess {
  return entryOf(brood).host;
}

/** The engine itself, for brood's own tests and diagnostics (never handed to plugins). */
export function runtimeOf(brood: object): Runtime {
  return entryOf(brood).runtime;
}

/** Called once by the facade for the runtime it fronts. */
export function attachPluginAccess(facade: object, runtime: Runtime): void {
  hosts.set(facade, { host: new RuntimePluginAccess(runtime), runtime });
}

function entryOf(brood: object): { host: PluginAccess; runtime: Runtime } {
  const entry = typeof brood === 'object' && brood !== null ? hosts.get(brood) : undefined;
  if (entry === undefined)
    throw new BroodError('INVALID_CONFIG', 'a brood plugin was given an object that is not a brood runtime');
  return entry;
}

class RuntimePluginAccess implements PluginAccess {
  private readonly reservations = new Map<string, string>();
  private readonly shared = new Map<string, { count: number; dispose: () => void }>();

  constructor(private readonly runtime: Runtime) {}

  get jobs(): JobTable {
    return this.runtime.subagents.jobs;
  }

  globalToolNames(): string[] {
    return this.runtime.tools.knownGlobalNames();
  }

  agentImpl(agent: Agent | undefined): AgentImpl | undefined {
    return this.runtime.agentImpl(agent);
  }

  addMountHook(hook: MountHook): Disposer {
    return this.runtime.subagents.addMountHook(hook);
  }

  reservationHolder(key: string): string | undefined {
    return this.reservations.get(key);
  }

  reserve(key: string, holder: string): Disposer {
    if (this.reservations.has(key))
      throw new BroodError('INTERNAL', `reservation '${key}' is already held by '${this.reservations.get(key)}'`);
    this.reservations.set(key, holder);
    return makeDisposer(() => {
      if (this.reservations.get(key) === holder) this.reservations.delete(key);
    });
  }

  acquireShared(key: string, install: () => () => void): Disposer {
    const existing = this.shared.get(key);
    if (existing !== undefined) existing.count += 1;
    else this.shared.set(key, { count: 1, dispose: install() });
    return makeDisposer(() => this.release(key));
  }

  markBackgroundStart(signal: AbortSignal): void {
    this.runtime.agentDeps.hub.backgroundSignals.add(signal);
  }

  quietParent(agent: Agent): void {
    const impl = this.runtime.agentImpl(agent);
    if (impl !== undefined) this.runtime.quietParents.add(impl);
  }

  private release(key: string): void {
    const entry = this.shared.get(key);
    if (entry === undefined) return;
    entry.count -= 1;
    if (entry.count > 0) return;
    this.shared.delete(key);
    entry.dispose();
  }
}
