/**
 * createBrood and the public `Brood` facade: validates options at the trust boundary and fronts one
 * private runtime engine (src/runtime/runtime.ts), like piscina's public class over its pool. All of
 * this module is public: src/index.ts exports it whole.
 */

import type { ResourceLimits } from 'node:worker_threads';
import type { Approvals, ApprovalsOptions } from './approvals/types.js';
import { broodOptionsSchema, type ParsedBroodOptions, parseConfig } from './config.js';
import { BroodError } from './errors.js';
import { cloneProviderConfigs } from './models/ai-sdk/options.js';
import { createModelCatalog, type ModelCatalog } from './models/catalog.js';
import { scriptedModels } from './models/scripted.js';
import type { ModelProviderConfig } from './models/types.js';
import { registerPersona } from './prompt/system.js';
import type { RunnerChoice } from './queue/config.js';
import type { CreateAgentOptions, ResumeAgentOptions } from './runtime/agent-options.js';
import { isPromiseLike } from './runtime/async-plugins.js';
import { attachPluginAccess } from './runtime/plugin-access.js';
import { recover } from './runtime/recover.js';
import { Runtime } from './runtime/runtime.js';
import type { Limits, SchedulerView } from './scheduler/types.js';
import { memorySessions } from './sessions/memory.js';
import { forkProvider, spawnProvider } from './subagents/providers.js';
import type { SubagentProvider, SubagentRuntime } from './subagents/types.js';
import type { TelemetryOptions } from './telemetry/options.js';
import type { ToolHooks } from './tools/hooks.js';
import type {
  Agent,
  BroodEvent,
  BroodEventsOptions,
  CodeMode,
  CodeResourceLimits,
  PromptRegistry,
  RecoveredTurn,
  RecoverOptions,
  SessionStore,
  ToolRegistry,
  UsageNode,
} from './types.js';
import { describe } from './util/describe.js';
import { type Disposer, makeDisposer } from './util/disposer.js';
import { guardDisposed } from './util/guard.js';
import type { IdGenerator } from './util/ids.js';
import { readUntrusted } from './util/untrusted.js';

export type { CreateAgentOptions, ResumeAgentOptions };

export interface BroodOptions {
  models?: ModelProviderConfig[];
  sessions?: SessionStore;
  persona?: string;
  maxParallelToolCalls?: number;
  /** Model requests per turn before the turn ends 'max-steps' (default 100). */
  maxSteps?: number;
  /** The largest content part (an image, a file, a text) a message may carry, in bytes (default 20 MiB). */
  maxInputBytes?: number;
  codeMode?: CodeMode;
  pool?: {
    threads?: number;
    idleTimeoutMs?: number;
    cancelGraceMs?: number;
    hangTimeoutMs?: number;
    resourceLimits?: ResourceLimits;
  };
  codeBusyTimeoutMs?: number;
  codeWallTimeoutMs?: number;
  /** run_code engine limits: heap, stack, output and tool calls per program (see README, Code Mode). */
  codeResourceLimits?: CodeResourceLimits;
  providers?: SubagentProvider[];
  /** Governed fan-out: agents, model requests and provider rate limits, tree-wide (docs/limits-and-budgets.md). */
  limits?: Limits;
  /** Where drivers run: the worker pool (default), the main thread, or remote hosts (`queueRunner(...)`). */
  runner?: RunnerChoice;
  preferences?: { get(key: string): unknown };
  /** Tool calls that wait for a human or a policy (docs/approvals.md). */
  approvals?: ApprovalsOptions;
  /** Hooks on every tool call an agent runs, in this process, after approvals (docs/tools.md, Hooks). */
  hooks?: ToolHooks;
  /** Told about faults no call could be failed with (a pool thread that died between tasks). Default: a process warning. */
  onDiagnostic?: (message: string) => void;
  /** OpenTelemetry spans (and metrics) of every turn, in the host's own tracing; see docs/telemetry.md. */
  telemetry?: TelemetryOptions;
  /** Deterministic ids and clock for tests (like the AI SDK's `_internal`). */
  _internal?: {
    generateId?: IdGenerator;
    now?: () => number;
    /** The timer approval expiry and cancel grace run on (returns its cancel). */
    setTimer?: (fn: () => void, ms: number) => () => void;
  };
}

/**
 * `install` returns a disposer (synchronous plugins) or a promise of one (asynchronous plugins such as
 * mcpTools); `use()` returns the same kind.
 */
export interface BroodPlugin<R extends Disposer | Promise<Disposer> = Disposer> {
  name: string;
  install(brood: Brood): R;
}

export interface Brood {
  readonly tools: ToolRegistry;
  readonly prompt: PromptRegistry;
  readonly models: ModelCatalog;
  readonly sessions: SessionStore;
  readonly subagents: SubagentRuntime;
  /** Tool calls waiting for the host, and the host's answers (docs/approvals.md). */
  readonly approvals: Approvals;
  /** The admission scheduler of `limits`: `stats()` counts running agents, queued work, requests in flight. */
  readonly scheduler: SchedulerView;
  createAgent(options: CreateAgentOptions): Promise<Agent>;
  resumeAgent(sessionId: string, options?: ResumeAgentOptions): Promise<Agent>;
  /**
   * Resumes every top-level agent of the store whose last turn a crash left open (children inside
   * their parents) and runs accepted, unclaimed messages; one entry per resumed top-level turn.
   */
  recover(options?: RecoverOptions): Promise<RecoveredTurn[]>;
  use<R extends Disposer | Promise<Disposer>>(plugin: BroodPlugin<R>): R;
  /** Every agent's events; see BroodEvent. */
  events(options?: BroodEventsOptions): AsyncIterable<BroodEvent>;
  /** Token usage read from the sessions; `subtree: true` adds every descendant (background and continuable too). */
  usage(agentId: string, options?: UsageOptions): Promise<UsageNode>;
  close(): Promise<void>;
}

export interface UsageOptions {
  /** Include every descendant session (default false: the agent's own requests only). */
  subtree?: boolean;
}

export function createBrood(options: BroodOptions = {}): Brood {
  const isObject = readUntrusted('INVALID_CONFIG', 'createBrood options', () => isOptionsObject(options));
  if (!isObject) {
    throw new BroodError(
      'INVALID_CONFIG',
      `invalid createBrood options: expected an options object, got ${describe(options)}`,
    );
  }
  const parsed = parseConfig(broodOptionsSchema, options, 'createBrood options');
  return new BroodFacade(parsed);
}

function isOptionsObject(value: unknown): value is BroodOptions {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class BroodFacade implements Brood {
  readonly tools: ToolRegistry;
  readonly prompt: PromptRegistry;
  readonly models: ModelCatalog;
  readonly sessions: SessionStore;
  readonly subagents: SubagentRuntime;
  readonly approvals: Approvals;
  readonly scheduler: SchedulerView;
  readonly #runtime: Runtime;

  constructor(options: ParsedBroodOptions) {
    const internal = options._internal ?? {};
    // Provider configs are plain data shipped to every thread: cloned here, once, their getters read
    // under guard (a config that cannot cross to a thread is refused now, not at the first run).
    this.models = readUntrusted('INVALID_CONFIG', 'a model provider config', () =>
      createModelCatalog(cloneProviderConfigs(options.models ?? [scriptedModels({ id: 'scripted' })])),
    );
    this.sessions = (options.sessions as SessionStore | undefined) ?? memorySessions();
    const runtime = new Runtime({
      options,
      catalog: this.models,
      store: this.sessions,
      ...(internal.generateId === undefined ? {} : { generateId: internal.generateId }),
      ...(internal.now === undefined ? {} : { now: internal.now }),
      ...(internal.setTimer === undefined ? {} : { setTimer: internal.setTimer }),
    });
    this.#runtime = runtime;
    this.subagents = runtime.subagents;
    this.approvals = runtime.approvals;
    this.scheduler = Object.freeze({ stats: () => runtime.scheduler.stats() });
    const closed = (): boolean => runtime.isClosed;
    this.tools = guardDisposed(runtime.tools.global, closed, 'this brood runtime', ['execute']);
    this.prompt = guardDisposed(runtime.prompt.global, closed, 'this brood runtime', []);
    attachPluginAccess(this, runtime);
    if (options.persona !== undefined) registerPersona(this.prompt, options.persona);
    try {
      for (const provider of (options.providers as SubagentProvider[] | undefined) ?? [spawnProvider(), forkProvider()])
        this.subagents.register(provider);
    } catch (error) {
      // createBrood failed: leave nothing behind (release the pool's threads now, not at exit).
      runtime.abandon();
      throw error;
    }
  }

  createAgent(options: CreateAgentOptions): Promise<Agent> {
    return this.#runtime.createAgent(options);
  }

  resumeAgent(sessionId: string, options: ResumeAgentOptions = {}): Promise<Agent> {
    return this.#runtime.resumeAgent(sessionId, options);
  }

  recover(options: RecoverOptions = {}): Promise<RecoveredTurn[]> {
    return recover(this.#runtime, options);
  }

  events(options?: BroodEventsOptions): AsyncIterable<BroodEvent> {
    this.#runtime.assertOpen();
    return this.#runtime.agentDeps.hub.subscribe(undefined, options);
  }

  use<R extends Disposer | Promise<Disposer>>(plugin: BroodPlugin<R>): R {
    this.#runtime.assertOpen();
    const { name, install } = readUntrusted('INVALID_CONFIG', 'a plugin', () => ({
      name: describePluginName(plugin?.name),
      install: plugin?.install,
    }));
    if (typeof install !== 'function')
      throw new BroodError('INVALID_CONFIG', 'a plugin needs a name and an install(brood) function');
    const dispose: Disposer | Promise<Disposer> = install.call(plugin, this);
    if (isPromiseLike(dispose))
      return this.#runtime.asyncPlugins.adopt(name, dispose, () => this.#runtime.isClosed) as unknown as R;
    return makeDisposer(() => dispose()) as R;
  }

  usage(agentId: string, options?: UsageOptions): Promise<UsageNode> {
    return this.#runtime.usage(agentId, options);
  }

  close(): Promise<void> {
    return this.#runtime.close();
  }
}

/** A plugin's name as asyncPlugins reports it (any value; String() of a hostile one could throw later). */
function describePluginName(name: unknown): string {
  return typeof name === 'string' ? name : describe(name);
}
