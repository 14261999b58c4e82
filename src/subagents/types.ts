/** Subagent runtime types (SPEC §9). Public ones are re-exported from src/index.ts. */

import type { ChildApprovals } from '../approvals/types.js';
import type { RunnerChoice } from '../queue/config.js';
import type { Budget } from '../scheduler/types.js';
import type { MessageDelivery } from '../sessions/event-types.js';
import type { Agent, JsonSchemaObject, ModelRoute, StopReason, ToolFilter, Usage } from '../types.js';
import type { Disposer } from '../util/disposer.js';

export interface SubagentCapabilities {
  persona: boolean;
  toolFilter: boolean;
  depthLimit: boolean;
  agentOptions: boolean;
  outputSchema: boolean;
  /** Enforces a step limit (`maxSteps`) on its children; absent means false. */
  maxSteps?: boolean;
}

export interface SubagentStartRequest {
  parent: Agent;
  prompt: string;
  label?: string;
  signal: AbortSignal;
  persona?: string;
  toolFilter?: ToolFilter;
  maxDepth?: number;
  agentOptions?: Partial<ModelRoute>;
  outputSchema?: JsonSchemaObject;
  /** Model requests per turn for the child (needs the `maxSteps` capability). */
  maxSteps?: number;
  /** Whether the child's calls that need approval ask the host or are refused; never looser than the parent's rule. */
  approvals?: ChildApprovals;
  /** A ceiling on the child's run; the parent's remainder tightens it further (local providers). */
  budget?: Budget;
  /** The per-request context the child's tools read (the delegating call's own); never stored. */
  context?: unknown;
}

export interface SubagentResult {
  output: string;
  stopReason: StopReason;
  diagnostic?: string;
  structured?: unknown;
  usage: Usage;
}

export interface SubagentRun {
  /** The child's session id for local providers. */
  id: string;
  /** Resolves for every child-level outcome; rejects only for faults of brood itself. */
  result: Promise<SubagentResult>;
  /** Cancels remaining work and releases the child; idempotent. */
  dispose(): Promise<void>;
}

export interface CreateChildOptions {
  request: SubagentStartRequest;
  /** Events inherited from the parent's completed turns (fork). */
  seed?: unknown[];
  /** Where the child's driver runs; default: the runtime's runner. */
  runner?: RunnerChoice;
  /** The provider's own private setup, run before publication; throwing → SETUP_FAILED. */
  setup?: (child: Agent) => void;
}

/** Gives in-process providers the same unpublished setup as the built-ins. */
export interface ProviderContext {
  /** The provider's registered name. */
  readonly provider: string;
  createChild(options: CreateChildOptions): Promise<SubagentRun>;
  /** The parent's completed turns, as session events, for providers that seed a child with them. */
  completedTurns(parent: Agent): Promise<unknown[]>;
}

export interface SubagentProvider {
  name: string;
  capabilities: SubagentCapabilities;
  inheritsParentContext: boolean;
  /** Where this provider's children run when it says so (`spawnProvider({ runner })`); restored children go back there. */
  runner?: RunnerChoice;
  start(request: SubagentStartRequest, ctx: ProviderContext): Promise<SubagentRun>;
  prepareContinuable?(request: {
    childId: string;
    parent: Agent;
    signal: AbortSignal;
  }): Promise<ContinuablePreparation>;
  /** Releases what the provider holds outside the runtime (an agent process); called when its registration is disposed and by `brood.close()`. */
  dispose?(): Promise<void> | void;
}

/** What `prepareContinuable` receives at run time: the documented fields plus the provider's context. */
export interface ContinuablePrepareRequest {
  childId: string;
  parent: Agent;
  signal: AbortSignal;
  context: ProviderContext;
}

export interface ContinuablePreparation {
  seed?: unknown[];
  /** Where the child's driver runs (inlineProvider: 'inline'); default: the runtime's runner. */
  runner?: RunnerChoice;
  /** The provider's private setup for the child, run before publication (throwing → SETUP_FAILED). */
  setup?: (child: Agent) => void;
}

export interface ContinuableSpec {
  provider: string;
  label: string;
  request: Omit<SubagentStartRequest, 'signal' | 'outputSchema'>;
  signal: AbortSignal;
  /** How the child's reports reach its parent by default (recorded in its descriptor); default 'next-step'. */
  reportDelivery?: ReportDelivery;
  /** The largest report the child may make, in UTF-8 bytes (recorded in its descriptor); default 1 MiB. */
  maxReportBytes?: number;
}

/**
 * `next-step`: wakes an idle parent; a running turn takes the report at its next model step.
 * `quiet`: accepted without waking the parent; its next turn sees it.
 */
export type ReportDelivery = MessageDelivery;

export interface ReportOptions {
  /** Default: the child's own (its subagentTool's reportDelivery). */
  delivery?: ReportDelivery;
  /** Aborted before the report is accepted: rejects ABORTED and nothing is written. */
  signal?: AbortSignal;
}

export interface SubagentStartEvent {
  runId: string;
  provider: string;
  id: string;
  parentId: string;
  depth: number;
}

export interface SubagentEndEvent {
  runId: string;
  provider: string;
  id: string;
  stopReason: StopReason;
  output?: string;
}

export type SubagentEventName = 'start' | 'end' | 'provider-added' | 'provider-removed';

export interface SubagentRuntime {
  register(provider: SubagentProvider): Disposer;
  list(): string[];
  get(name: string): SubagentProvider | undefined;
  start(provider: string, request: SubagentStartRequest): Promise<SubagentRun>;
  startContinuable(spec: ContinuableSpec): Promise<{ childId: string; messageId: string }>;
  followup(
    parent: Agent,
    childId: string,
    message: string,
    opts: { signal: AbortSignal; context?: unknown },
  ): Promise<string>;
  interrupt(childId: string, by: Agent): void;
  /**
   * A continuable child's report to its parent (the path of the child's `report` tool); resolves with
   * the parent's message id once the report is durable.
   */
  reportFrom(childId: string, output: string, options?: ReportOptions): Promise<string>;
  // biome-ignore lint/suspicious/noExplicitAny: SPEC §3 declares the listener as (info: any) => void; callers narrow it.
  on(event: SubagentEventName, fn: (info: any) => void): Disposer;
}

export type JobStatus = 'running' | 'stopping' | 'completed' | 'killed' | 'failed';

/** A parent-owned background one-shot run (SPEC §11.6). */
export interface Job {
  readonly id: string;
  readonly ownerId: string;
  readonly label: string;
  readonly kind: 'subagent';
  readonly status: JobStatus;
  /** Set once the job finished. */
  readonly result: SubagentResult | undefined;
  /** Settles when the job finished (any status). */
  readonly done: Promise<void>;
}

export interface JobOptions {
  /**
   * Tell the owner when the job finished (a notice in its inbox, which starts a turn). Default true;
   * false for owners that are not model-driven (the MCP server's parents: its client polls the task).
   */
  notifyOwner?: boolean;
  /** The job's id when it is one announced before a crash, adopted again on recovery (job_<n>). */
  id?: string;
}

export interface JobTable {
  /** Registers a running job synchronously; the job owns its own cancellation (not the tool call's). */
  create(owner: Agent, run: SubagentRun, label: string, controller: AbortController, options?: JobOptions): Job;
  /** A job of this owner, or undefined (unknown id or another agent's). */
  get(owner: Agent, jobId: string): Job | undefined;
  list(owner: Agent): Job[];
  /** Requests cancellation; returns false when the job had already finished. */
  kill(owner: Agent, jobId: string): boolean;
}

/** Synchronous hooks run inside `subagents.register()` and its disposer; `added` throwing vetoes the registration. */
export interface MountHook {
  added(provider: SubagentProvider): void;
  removed(provider: SubagentProvider): void;
}
