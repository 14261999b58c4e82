/** What an agent needs from its runtime; the runtime builds one per agent (registries are per runtime). */
import type { ApprovalGate } from '../approvals/gate.js';
import type { Clock } from '../clock.js';
import type { EventHub } from '../events/hub.js';
import type { ModelProxy } from '../models/ai-sdk/proxy-server.js';
import type { MessagePart, PartFormat } from '../models/content-parts.js';
import type { ChatMessage } from '../models/types.js';
import type { PromptScope } from '../prompt/system.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { Budget } from '../scheduler/types.js';
import type { MessageDelivery } from '../sessions/event-types.js';
import type { AgentToolScope } from '../tools/system.js';
import type { CodeMode, ModelRoute, ResolvedCodeLimits, SessionStore, TurnResult } from '../types.js';
import type { IdGenerator } from '../util/ids.js';
import type { DriverRunner } from '../wire/runner.js';
import type { CellSlabs, VersionCell } from '../wire/version-cell.js';
import type { RequestTexts } from './request-texts.js';
import type { StructuredTurn } from './structured-turn.js';

export interface AgentRuntimeLimits {
  maxParallelToolCalls: number;
  codeMode: CodeMode;
  codeBusyTimeoutMs: number;
  codeWallTimeoutMs: number;
  codeLimits: ResolvedCodeLimits;
  cancelGraceMs: number;
  /** Model requests per turn for agents that set none (createBrood maxSteps, default 100). */
  maxSteps: number;
  /** The largest content part a message may carry (createBrood maxInputBytes; default 20 MiB). */
  maxInputBytes?: number;
}

export interface AgentDeps {
  /** createBrood's onDiagnostic: what the host should know that fails nothing. */
  reportDiagnostic: (message: string) => void;
  store: SessionStore;
  runner: DriverRunner;
  ids: IdGenerator;
  now: () => number;
  /** The runtime's timers (cancel grace, approval expiry): a test's fake clock through `_internal.setTimer`. */
  timers: Pick<Clock, 'setTimeout'>;
  limits: AgentRuntimeLimits;
  globalVersion: VersionCell;
  /** Where the agents' own cells are cut from (and given back to when they are disposed). */
  cells: CellSlabs;
  /** Host event fan-out; inactive (and free) while nobody subscribes. */
  hub: EventHub;
  /** The approval gate every tool call passes (docs/approvals.md). */
  approvals: ApprovalGate;
  /** The runtime's admission scheduler (createBrood `limits`); admits nothing and costs nothing without limits. */
  scheduler: Scheduler;
  /** Serves drivers' calls to AI SDK models kept in the parent (aiSdkModels' proxied shape); absent without any. */
  modelProxy?: ModelProxy;
  /** The wire format a provider's requests use, when it carries only some media types (checked at run/send). */
  partFormat?: (provider: string) => PartFormat | undefined;
  /** One copy of each recent text the drivers' logged requests repeat (system prompt, tool names). */
  requestTexts: RequestTexts;
  /** Called once the agent is disposed, so the runtime can forget it. */
  onDisposed(agentId: string): void;
}

export interface AgentInit {
  id: string;
  depth: number;
  parentId: string | undefined;
  route: ModelRoute;
  lastRequestRoute: ModelRoute | undefined;
  codeMode: CodeMode;
  /** This agent's step limit (model requests per turn). */
  maxSteps: number;
  /** createAgent's `budget`: every turn's, tightened by the run's own. */
  budget?: Budget;
  /** 'top' for host-created agents; children are one-shot runs or continuable conversations. */
  mode: 'top' | 'one-shot' | 'continuable';
  /** A child's delegation label (usage trees name children by it). */
  label?: string;
  /** The session's model-selection decision (SPEC §11.9), sampled once and inherited by children. */
  modelSelectionEnabled: boolean;
  tools: AgentToolScope;
  prompt: PromptScope;
  /** Session state: next seq, history, turn counter and messages accepted but never claimed. */
  nextSeq: number;
  history: ChatMessage[];
  ownStart: number;
  lastTurn: number;
  /**
   * `context`: the per-request context a resume gave again (never read from the session); `structured`:
   * the turn tool of a message accepted with an outputSchema.
   */
  unclaimed: {
    id: string;
    text: string;
    parts?: MessagePart[];
    source: string;
    delivery?: MessageDelivery;
    context?: unknown;
    structured?: StructuredTurn;
  }[];
}

/** Told when an agent goes from idle to busy and back (each busy period of a continuable child is a run). */
export interface ActivationObserver {
  activationStarted(): void;
  activationEnded(last: TurnResult | undefined): void;
}
