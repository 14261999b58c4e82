/** What the subagent runtime needs from the rest of the runtime. */
import type { AgentImpl } from '../agents/agent.js';
import type { RuntimeCore } from '../agents/runtime-core.js';
import type { QueueRunnerConfig } from '../queue/config.js';
import type { Agent } from '../types.js';
import type { DriverRunner } from '../wire/runner.js';
import type { ContainedEvents } from './events.js';
import type { SubagentEventName, SubagentRun } from './types.js';

export interface SubagentCore extends RuntimeCore {
  defaultRunnerKind: 'worker' | 'inline';
  events: ContainedEvents<SubagentEventName>;
  /** Runs whose result a job owns: their usage is not rolled up into the parent's turn. */
  detachedRuns: WeakSet<SubagentRun>;
  /** The runtime's own object for a parent; rejects foreign or disposed agents. */
  parentOf(agent: Agent): AgentImpl;
  /** Rebuilds an agent from its session (see agents/restore.ts). */
  restore(sessionId: string): Promise<AgentImpl>;
  /** This runtime's runner for a queueRunner config (one per config, connected lazily). */
  queueRunner(config: QueueRunnerConfig): DriverRunner;
  /** Parents that take no settlement notice from their continuable children (an MCP-served call's parent never calls a model). */
  quietParents: WeakSet<object>;
  /** Where failures with no caller to reject go (a notice that could not be written). */
  reportBackgroundError?: (message: string) => void;
}
