/**
 * What the MCP server's tools do, without the SDK: every served `delegate` runs through the delegation
 * tool's own body (src/delegation/routes.ts) — the same parse, gate, depth, filters and routes as the
 * `subagent` tool — under a top-level parent agent made for that call. One parent per call keeps each
 * call's progress (the parent's subtree events) and cancellation its own, and gives `brood inspect` one
 * tree per served call. A task is the parent's one-shot background job: one record, the runtime's.
 */
import type { Brood } from '../../brood.js';
import {
  type BackgroundValue,
  type DelegationDeps,
  type DelegationExtras,
  type ForegroundValue,
  runDelegation,
} from '../../delegation/routes.js';
import { subagentsOf } from '../../delegation/shared.js';
import { checkCapabilities } from '../../delegation/subagent-tool.js';
import { BroodError } from '../../errors.js';
import { pluginAccess } from '../../runtime/plugin-access.js';
import type { Job } from '../../subagents/types.js';
import type { Agent, BroodEvent } from '../../types.js';
import { type DelegateArgs, parseContinueArgs, parseDelegateArgs } from './arguments.js';
import { type ContinuableOutcome, ServedContinuables } from './continuables.js';
import type { ResolvedMcpServerOptions } from './options.js';
import { progressText } from './progress.js';

export interface Outcome {
  text: string;
  structured?: unknown;
  /** A continuable child's id (also the last line of `text`), for `continue`. */
  childId?: string;
}

/** A served task: the background job and the parent that owns it. */
export interface ServedTask {
  readonly id: string;
  readonly job: Job;
  readonly parent: Agent;
  readonly createdAt: Date;
  /** Set by tasks/cancel: the task reads `cancelled` from then on, whatever the job does meanwhile. */
  cancelled: boolean;
  lastUpdatedAt: Date;
}

export class ServedDelegations {
  readonly #brood: Brood;
  readonly #options: ResolvedMcpServerOptions;
  readonly #deps: DelegationDeps;
  /** Controllers of the synchronous calls under way: a disconnect or close() aborts them. */
  readonly #calls = new Set<AbortController>();
  readonly #parents = new Set<Agent>();
  readonly #tasks = new Map<string, ServedTask>();
  readonly #continuables: ServedContinuables;
  /** Task calls between their start and their job's registration: counted against the cap too. */
  #startingTasks = 0;
  #closed = false;

  constructor(brood: Brood, options: ResolvedMcpServerOptions) {
    this.#brood = brood;
    this.#options = options;
    const selection = options.delegation.enableModelSelection;
    this.#deps = { brood, config: options.delegation, selectionFor: () => selection };
    this.#continuables = new ServedContinuables(brood, this.#deps);
    this.#checkProvider();
  }

  /** §11.1's capability check, as the subagent tool does at mount; again per call, since providers come and go. */
  #checkProvider(): void {
    const provider = subagentsOf(this.#brood).get(this.#options.delegation.provider);
    if (provider !== undefined) checkCapabilities(this.#options.delegation, provider);
  }

  /** Whether `delegate` takes task-augmented calls: tasks are one-shot background jobs. */
  get tasksSupported(): boolean {
    const config = this.#options.delegation;
    return this.#options.tasks && config.enableRunInBackground && config.backgroundMode === 'one-shot';
  }

  /** Whether children keep their conversation: `delegate` answers with a child_id and `continue` is served. */
  get continuable(): boolean {
    const config = this.#options.delegation;
    return config.enableRunInBackground && config.backgroundMode === 'continuable';
  }

  get modelSelection(): boolean {
    return this.#options.delegation.enableModelSelection;
  }

  /** A foreground delegation; `progress` hears the child's subtree while it runs. */
  async foreground(raw: unknown, callSignal: AbortSignal, progress?: (message: string) => void): Promise<Outcome> {
    const args = parseDelegateArgs(raw, this.modelSelection);
    this.#checkProvider();
    const controller = this.#track(callSignal);
    let parent: Agent | undefined;
    let watching: Promise<void> | undefined;
    let kept = false;
    try {
      parent = await this.#parent(controller.signal);
      if (progress !== undefined) watching = watch(parent, controller.signal, progress);
      if (this.continuable) {
        const started = await this.#continuables.start(parent, toolArgs(args, true, true), controller.signal);
        kept = true; // the child lives on under this parent until close()
        return continuableOutcome(started);
      }
      const result = await runDelegation(
        this.#deps,
        toolArgs(args, false, this.#options.delegation.enableRunInBackground),
        callContext(parent, controller.signal),
        extras(args),
      );
      const value = (result as { value: ForegroundValue }).value;
      return value.structured === undefined
        ? { text: textOf(value) }
        : { text: textOf(value), structured: value.structured };
    } finally {
      controller.abort();
      this.#calls.delete(controller);
      await watching;
      if (parent !== undefined && !kept) await this.#dispose(parent);
    }
  }

  /** `continue`: the next message to a continuable child a `delegate` call of this server started. */
  async continue(raw: unknown, callSignal: AbortSignal): Promise<Outcome> {
    const args = parseContinueArgs(raw);
    const controller = this.#track(callSignal);
    try {
      return continuableOutcome(await this.#continuables.continue(args.child_id, args.message, controller.signal));
    } finally {
      controller.abort();
      this.#calls.delete(controller);
    }
  }

  /** A task-augmented delegation: returns once the child's job is registered; the job runs on. */
  async startTask(raw: unknown, callSignal: AbortSignal): Promise<ServedTask> {
    if (!this.tasksSupported) {
      throw new BroodError(
        'UNSUPPORTED_CAPABILITY',
        'this server does not run delegate as a task (tasks are off or the delegation has no one-shot background route)',
      );
    }
    const args = parseDelegateArgs(raw, this.modelSelection);
    this.#checkProvider();
    this.#checkTaskSlot();
    const controller = this.#track(callSignal);
    this.#startingTasks += 1;
    let parent: Agent | undefined;
    try {
      parent = await this.#parent(controller.signal);
      const result = await runDelegation(
        this.#deps,
        toolArgs(args, true, true),
        callContext(parent, controller.signal),
        extras(args),
      );
      const { jobId } = (result as { value: BackgroundValue }).value;
      const job = pluginAccess(this.#brood).jobs.get(parent, jobId);
      if (job === undefined) throw new BroodError('INTERNAL', `background job ${jobId} is not in the job table`);
      const now = new Date();
      const task: ServedTask = { id: job.id, job, parent, createdAt: now, lastUpdatedAt: now, cancelled: false };
      this.#tasks.set(task.id, task);
      const owner = parent;
      // The parent outlives the call: it owns the job until the job ends (or close()).
      void job.done.finally(() => {
        task.lastUpdatedAt = new Date();
        void this.#dispose(owner);
      });
      return task;
    } catch (error) {
      if (parent !== undefined) await this.#dispose(parent);
      throw error;
    } finally {
      this.#startingTasks -= 1;
      this.#calls.delete(controller);
    }
  }

  /** One client's tasks are capped (tasks.max): each holds a parent and a child until it ends. */
  #checkTaskSlot(): void {
    const working = this.tasks().filter((task) => taskStatus(task) === 'working').length;
    if (working + this.#startingTasks >= this.#options.maxTasks) {
      throw new Error(
        `too many tasks: this client already has ${this.#options.maxTasks} working (tasks.max); ` +
          'wait for one to end or cancel one',
      );
    }
  }

  task(id: string): ServedTask | undefined {
    return this.#tasks.get(id);
  }

  tasks(): ServedTask[] {
    return [...this.#tasks.values()];
  }

  /** Kills the task's job; false when it had already finished. */
  cancelTask(id: string): boolean {
    const task = this.#tasks.get(id);
    if (task === undefined || taskStatus(task) !== 'working') return false;
    task.cancelled = true;
    task.lastUpdatedAt = new Date();
    pluginAccess(this.#brood).jobs.kill(task.parent, task.job.id);
    return true;
  }

  /** server.close(): aborts the calls under way and disposes every parent, which kills their jobs. */
  async close(): Promise<void> {
    this.#closed = true;
    this.abortCalls();
    await Promise.allSettled([...this.#parents].map((parent) => this.#dispose(parent)));
  }

  /** A client gone: its synchronous calls end; its tasks keep running until close(). */
  abortCalls(): void {
    for (const controller of this.#calls) controller.abort(new BroodError('ABORTED', 'the MCP client disconnected'));
  }

  #track(callSignal: AbortSignal): AbortController {
    if (this.#closed) throw new BroodError('ABORTED', 'the MCP server is closed');
    const controller = new AbortController();
    if (callSignal.aborted) controller.abort(callSignal.reason);
    else callSignal.addEventListener('abort', () => controller.abort(callSignal.reason), { once: true });
    this.#calls.add(controller);
    return controller;
  }

  async #parent(signal: AbortSignal): Promise<Agent> {
    const parent = await this.#brood.createAgent({ ...parentOptions(this.#brood, this.#options), signal });
    this.#parents.add(parent);
    return parent;
  }

  async #dispose(parent: Agent): Promise<void> {
    if (!this.#parents.delete(parent)) return;
    await parent.dispose().catch(() => undefined);
  }
}

/** The served task's status in MCP's words (a killed job is a cancelled task). */
export function taskStatus(task: ServedTask): 'working' | 'completed' | 'failed' | 'cancelled' {
  if (task.cancelled) return 'cancelled';
  switch (task.job.status) {
    case 'running':
    case 'stopping':
      return 'working';
    case 'killed':
      return 'cancelled';
    default:
      return task.job.status;
  }
}

/**
 * The subagent tool's own arguments for this call. The route is always explicit: a continuable
 * delegation's default route would start a continuable child, which a served call does not use.
 */
function toolArgs(args: DelegateArgs, background: boolean, routeChoice: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { description: args.description, prompt: args.prompt };
  // A delegation without a background route refuses the key even when false, so it is sent only when it has one.
  if (background || routeChoice) out.run_in_background = background;
  if (args.provider !== undefined) out.provider = args.provider;
  if (args.model !== undefined) out.model = args.model;
  return out;
}

/** Served jobs tell nobody they finished: the client polls the task, and a notice would start a parent turn. */
function extras(args: DelegateArgs): DelegationExtras {
  const out: DelegationExtras = { notifyOwner: false };
  if (args.outputSchema !== undefined) out.outputSchema = args.outputSchema;
  return out;
}

/** A continuable child's turn: its output, then the id `continue` takes; a turn that did not complete is an error. */
function continuableOutcome(turn: ContinuableOutcome): Outcome {
  if (turn.stopReason !== 'completed') {
    // As a failed foreground child reads: the headline, no brood code (the child's own failure).
    throw new Error(
      `subagent run ${turn.stopReason === 'aborted' ? 'was cancelled' : `ended ${turn.stopReason}`} (child_id: ${turn.childId})`,
    );
  }
  return { text: `${turn.output}\n\nchild_id: ${turn.childId}`, childId: turn.childId };
}

function callContext(parent: Agent, signal: AbortSignal) {
  return { callId: `mcp-${parent.id}`, agent: parent, signal };
}

function textOf(value: ForegroundValue): string {
  return value.output.map((part) => part.text).join('');
}

/** The parent side's agent options: the configured ones, else the delegation's route, else the catalog's first model. */
function parentOptions(brood: Brood, options: ResolvedMcpServerOptions) {
  if (options.agent !== undefined) return options.agent;
  const route = options.delegation.agentOptions;
  if (route?.provider !== undefined && route.model !== undefined) {
    return { model: { provider: route.provider, model: route.model } };
  }
  const provider = brood.models.providers()[0];
  const model = provider === undefined ? undefined : brood.models.models(provider.id)[0];
  if (provider === undefined || model === undefined) {
    throw new BroodError(
      'INVALID_CONFIG',
      'mcpServer: no parent model: give options.agent or a delegation agentOptions route',
    );
  }
  return { model: { provider: provider.id, model: model.id } };
}

/** Forwards the parent's subtree events as progress lines until `signal` aborts. */
async function watch(parent: Agent, signal: AbortSignal, progress: (message: string) => void): Promise<void> {
  try {
    for await (const event of parent.events({ signal }) as AsyncIterable<BroodEvent>) {
      const text = progressText(event);
      if (text !== undefined) progress(text);
    }
  } catch {
    // Progress is best effort: a failed notification never fails the call.
  }
}
