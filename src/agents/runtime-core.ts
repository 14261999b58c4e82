/** The parts of a runtime that agents and providers are built from (one per createBrood call). */
import type { ModelCatalog } from '../models/catalog.js';
import type { PromptSystem } from '../prompt/system.js';
import type { ToolSystem } from '../tools/system.js';
import type { SessionStore } from '../types.js';
import type { IdGenerator } from '../util/ids.js';
import type { DriverRunner } from '../wire/runner.js';
import type { AgentImpl } from './agent.js';
import type { AgentDeps } from './types.js';

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
}
