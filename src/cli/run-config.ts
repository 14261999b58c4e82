/**
 * The `brood run --config <file.json>` format, validated with zod. Every problem becomes one
 * UsageError line naming the file and the key (exit 2), so a user can fix the config without reading
 * this source. Keys are strict: a misspelt key is an error, not a silently ignored setting.
 *
 * API keys are never accepted inline — only the name of an environment variable (`apiKeyEnv`) — so a
 * config file can be committed and shared safely.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { UsageError } from './cli-errors.js';

export const BUILTIN_TOOL_NAMES = ['read_file', 'list_dir', 'http_get'] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

const nonEmpty = z.string().min(1, 'must be a non-empty string');

const modelEntry = z.union([
  nonEmpty,
  z.strictObject({
    id: nonEmpty,
    efforts: z.array(nonEmpty).optional(),
    defaultEffort: nonEmpty.optional(),
    maxTokens: z.number().int().positive().optional(),
  }),
]);

const providerSchema = z.strictObject({
  id: nonEmpty,
  name: nonEmpty.optional(),
  baseURL: z.string().refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), 'must be an http(s) URL'),
  apiKeyEnv: nonEmpty.optional(),
  models: z.array(modelEntry).min(1, 'must list at least one model'),
  acceptsUnlistedModels: z.boolean().optional(),
  maxTokensField: z.enum(['max_tokens', 'max_completion_tokens']).optional(),
});

const toolFilterSchema = z
  .strictObject({ allow: z.array(nonEmpty).optional(), deny: z.array(nonEmpty).optional() })
  .refine((f) => f.allow !== undefined || f.deny !== undefined, 'needs an allow or a deny list');

// `mcpServers` takes the shape MCP clients already use; the key is the server name (checked by mcpTools).
const mcpServerSchema = z.union([
  z.strictObject({
    command: nonEmpty,
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: nonEmpty.optional(),
  }),
  z.strictObject({
    url: z.string().refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), 'must be an http(s) URL'),
    headers: z.record(z.string(), z.string()).optional(),
  }),
]);

const configSchema = z.strictObject({
  models: z.array(providerSchema).min(1, 'must configure at least one provider'),
  agent: z.strictObject({
    model: z.strictObject({
      provider: nonEmpty,
      model: nonEmpty,
      reasoningEffort: nonEmpty.optional(),
      maxTokens: z.number().int().positive().optional(),
    }),
    persona: z.string().optional(),
    toolFilter: toolFilterSchema.optional(),
  }),
  tools: z.array(z.enum(BUILTIN_TOOL_NAMES)).default([]),
  /** Directory read_file/list_dir are confined to; relative to the config file. */
  root: nonEmpty.default('.'),
  /** subagentTool() configs; validated by the library itself when installed. */
  delegation: z.array(z.record(z.string(), z.unknown())).default([]),
  /** fileSessions directory (relative to the config file); default: in-memory sessions. */
  sessions: nonEmpty.optional(),
  maxParallelToolCalls: z.number().int().positive().optional(),
  prompt: nonEmpty.optional(),
  /** MCP servers whose tools the agent gets as mcp__<name>__<tool>; stdio servers start in the config file's directory. */
  mcpServers: z.record(z.string(), mcpServerSchema).default({}),
});

export type RunConfig = z.infer<typeof configSchema> & { file: string; root: string; sessions?: string };

/** Reads, parses and validates the file; paths in the result are absolute. */
export async function loadRunConfig(file: string): Promise<RunConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `brood run: cannot read config ${file}: ${(error as { code?: string }).code ?? String(error)}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`brood run: config ${file} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = configSchema.safeParse(json);
  if (!parsed.success) throw new UsageError(`brood run: config ${file}: ${describeIssues(parsed.error.issues)}`);
  const base = dirname(resolve(file));
  const config: RunConfig = { ...parsed.data, file, root: resolve(base, parsed.data.root) };
  if (parsed.data.sessions !== undefined) config.sessions = resolve(base, parsed.data.sessions);
  for (const server of Object.values(config.mcpServers))
    if ('command' in server) server.cwd = resolve(base, server.cwd ?? '.');
  checkReferences(config);
  return config;
}

/** Cross-field checks zod's per-key schema cannot express. */
function checkReferences(config: RunConfig): void {
  const fail = (key: string, message: string): never => {
    throw new UsageError(`brood run: config ${config.file}: ${key}: ${message}`);
  };
  const ids = config.models.map((m) => m.id);
  const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
  if (duplicate !== undefined) fail('models', `provider id '${duplicate}' is configured twice`);
  if (!ids.includes(config.agent.model.provider)) {
    fail(
      'agent.model.provider',
      `'${config.agent.model.provider}' is not one of the configured providers (${ids.join(', ')})`,
    );
  }
  config.models.forEach((provider, i) => {
    if (provider.apiKeyEnv !== undefined && !process.env[provider.apiKeyEnv]) {
      fail(`models[${i}].apiKeyEnv`, `environment variable ${provider.apiKeyEnv} is not set`);
    }
  });
}

/** The first issue, with its key path, plus how many more there are: one line, most useful first. */
function describeIssues(issues: z.core.$ZodIssue[]): string {
  const [first] = issues;
  if (first === undefined) return 'invalid';
  const path = first.path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('')
    .replace(/^\./, '');
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  return `${path === '' ? '(root)' : path}: ${first.message}${more}`;
}
