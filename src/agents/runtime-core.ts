/** The parts of a runtime that agents and providers are built from (one per createBrood call). */
import type { ModelCatalog } from '../models/catalog.js';
import type { PromptSystem } from '../prompt/system.js';
import type { ToolSystem } from '../tools/system.js';
import type { IdGenerator } from '../ids.js';
import type { SessionStore } from '../types.js';
import type { AgentImpl } from './agent.js';
import type { AgentDeps } from './types.js';
import type { DriverRunner } from '../wire/runner.js';
import type { QueueRunnerConfig } from '../queue/config.js';

export interface RuntimeCore {
  tools: ToolSystem;
  prompt: PromptSystem;
  catalog: ModelCatalog;
  store: SessionStore;
  ids: IdGenerator;
  agentDeps: AgentDeps;
  /** Live agents by id (session id). */
  agents: Map<string, AgentImpl>;
  /** Runs drivers on the main thread (inlineProvider children, or everything with runner 'inline'). */
  inlineRunner: DriverRunner;
  /** Host preferences (model-selection settings). */
  preferences: { get(key: string): unknown } | undefined;
  /** Called after an agent was rebuilt from its session and before it wakes (continuable children re-attach). */
  onRestored(agent: AgentImpl, descriptor: Record<string, unknown>): void;
  /** The driver of a restored child that an out-of-process provider ran (SubagentRuntime.externalRunnerFor). */
  externalRunner(sessionId: string, descriptor: Record<string, unknown>): DriverRunner;
  /** This runtime's runner for a queueRunner config (one per config, connected lazily). */
  queueRunner(config: QueueRunnerConfig): DriverRunner;
  /** The runner of a restored child whose descriptor says `runner: 'queue'`: its provider's. */
  restoredQueueRunner(descriptor: Record<string, unknown>): DriverRunner;
}
