/**
 * mcpServer's options. Validated once, when the server is made: a bad option is one
 * INVALID_CONFIG naming the key, never a failure on a client's first call.
 */
import { z } from 'zod';
import type { CreateAgentOptions } from '../../brood.js';
import { DEFAULTS } from '../../defaults.js';
import {
  parseSubagentToolConfig,
  type ResolvedSubagentToolConfig,
  type SubagentToolConfig,
} from '../../delegation/config.js';
import { BroodError } from '../../errors.js';
import { parseUntrusted } from '../../util/untrusted.js';

export interface McpServerOptions {
  /** The server name in initialize (default 'brood'). */
  name?: string;
  /** What a delegated child may be: provider, persona, toolFilter, maxDepth, models… (subagentTool's config). */
  delegation: SubagentToolConfig;
  /**
   * Whether `delegate` takes task-augmented calls (default true); `{ max }` turns them on and caps how
   * many one client may have working at once (default 16; past it a task call is refused).
   */
  tasks?: boolean | { max?: number };
  /**
   * The parent side of every served delegation: each call runs under a top-level agent made with these
   * options. Default: the delegation's `agentOptions` route when it names a provider and model, else the
   * catalog's first model.
   */
  agent?: Omit<CreateAgentOptions, 'id' | 'signal'>;
}

export interface ResolvedMcpServerOptions {
  readonly name: string;
  readonly delegation: ResolvedSubagentToolConfig;
  readonly tasks: boolean;
  readonly maxTasks: number;
  readonly agent: Omit<CreateAgentOptions, 'id' | 'signal'> | undefined;
}

const optionsSchema = z.strictObject({
  name: z.string().min(1, 'must be a non-empty string').optional(),
  delegation: z.unknown(),
  tasks: z
    .union([z.boolean(), z.strictObject({ max: z.number().int().min(1, 'must be at least 1').optional() })])
    .optional(),
  agent: z.looseObject({}).optional(),
});

export function parseMcpServerOptions(input: unknown): ResolvedMcpServerOptions {
  const parsed = parseUntrusted(optionsSchema, input, 'INVALID_CONFIG', 'mcpServer options');
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue === undefined || issue.path.length === 0 ? '(root)' : issue.path.join('.');
    throw new BroodError('INVALID_CONFIG', `invalid mcpServer options: ${key}: ${issue?.message ?? 'invalid'}`);
  }
  if (parsed.data.delegation === undefined) {
    throw new BroodError(
      'INVALID_CONFIG',
      'invalid mcpServer options: delegation: is required (a subagentTool config)',
    );
  }
  const { tasks } = parsed.data;
  return {
    name: parsed.data.name ?? DEFAULTS.mcpServer.name,
    delegation: parseSubagentToolConfig(parsed.data.delegation),
    tasks: typeof tasks === 'object' ? true : (tasks ?? DEFAULTS.mcpServer.tasks),
    maxTasks: (typeof tasks === 'object' ? tasks.max : undefined) ?? DEFAULTS.mcpServer.maxTasks,
    agent: parsed.data.agent as ResolvedMcpServerOptions['agent'],
  };
}
