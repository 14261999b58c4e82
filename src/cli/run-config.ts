/**
 * The `brood run --config <file.json>` format (also `brood acp`'s). Every problem becomes one
 * UsageError line naming the file and the key (exit 2), so a user can fix the config without reading
 * this source. Keys are strict: a misspelt key is an error, not a silently ignored setting.
 *
 * The schema is derived from the library's own option schemas — createBrood's, createAgent's,
 * openAICompatible's / anthropicCompatible's, subagentTool's and mcpTools' — minus the options JSON
 * cannot carry, so an option the library gains is accepted here without a change to this file.
 *
 * API keys are never accepted inline — only the name of an environment variable (`apiKeyEnv`) — so a
 * config file can be committed and shared safely.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { broodOptionsSchema, createAgentOptionsSchema } from '../config.js';
import { subagentToolConfigSchema } from '../delegation/config.js';
import { httpServerSchema, mcpToolsOptionsSchema, stdioServerSchema } from '../mcp/config.js';
import { aiSdkRunConfigSchema } from '../models/ai-sdk/options.js';
import { anthropicCompatibleOptionsSchema } from '../models/anthropic.js';
import { openAICompatibleOptionsSchema } from '../models/openai.js';
import { deepest } from '../models/validate.js';
import { UsageError } from './cli-errors.js';

export const BUILTIN_TOOL_NAMES = ['read_file', 'list_dir', 'http_get'] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

/**
 * Library options a JSON file cannot carry (stores, functions, provider objects, runner instances) or
 * that the config spells its own way (`models` as provider entries, `sessions` as a directory).
 */
const RUNTIME_OPTIONS_NOT_IN_JSON = [
  'models',
  'sessions',
  'providers',
  'runner',
  'preferences',
  'onDiagnostic',
] as const;
/**
 * `id`: each run (each ACP session) is a new agent; `depth`, `signal`: set by the CLI; `history`: a
 * conversation belongs to a request, not to a config.
 */
const AGENT_OPTIONS_NOT_IN_JSON = ['id', 'depth', 'signal', 'history'] as const;
const MCP_OPTIONS_NOT_IN_JSON = ['scope', 'onStatus'] as const;

function without<S extends Record<string, unknown>, K extends keyof S>(shape: S, keys: readonly K[]): Omit<S, K> {
  const rest: Record<string, unknown> = { ...shape };
  for (const key of keys) delete rest[key as string];
  return rest as Omit<S, K>;
}

const nonEmpty = z.string().min(1, 'must be a non-empty string');

const inlineKey = {
  apiKey: z
    .never({ error: 'keys are never written in the config: name an environment variable in apiKeyEnv' })
    .optional(),
};

/** `kind` picks the factory; without it a provider is OpenAI-compatible (the first format had no kind). */
const providerSchema = z.discriminatedUnion(
  'kind',
  [
    openAICompatibleOptionsSchema().extend({ kind: z.literal('openai').default('openai'), ...inlineKey }),
    anthropicCompatibleOptionsSchema().extend({ kind: z.literal('anthropic'), ...inlineKey }),
    aiSdkRunConfigSchema(),
  ],
  { error: "must be 'openai' (the default), 'anthropic' or 'ai-sdk'" },
);

// `mcpServers` takes the shape MCP clients already use (the key is the server name), plus mcpTools' options.
const mcpOptionsShape = without(mcpToolsOptionsSchema.shape, MCP_OPTIONS_NOT_IN_JSON);
const mcpServerSchema = z.union([
  stdioServerSchema.omit({ name: true }).extend(mcpOptionsShape),
  httpServerSchema.omit({ name: true }).extend(mcpOptionsShape),
]);

const configSchema = z.strictObject({
  ...without(broodOptionsSchema.shape, RUNTIME_OPTIONS_NOT_IN_JSON),
  /** A policy is a function: the config names the tools whose calls ask (`*`: every tool). */
  approvals: z
    .strictObject({
      ask: z.array(nonEmpty).optional(),
      children: z.enum(['deny', 'ask']).optional(),
      timeoutMs: z
        .number()
        .int()
        .min(1)
        .max(2 ** 31 - 1)
        .optional(),
    })
    .optional(),
  models: z.array(providerSchema).min(1, 'must configure at least one provider'),
  agent: z.strictObject(without(createAgentOptionsSchema.shape, AGENT_OPTIONS_NOT_IN_JSON)),
  tools: z.array(z.enum(BUILTIN_TOOL_NAMES)).default([]),
  /** Directory read_file/list_dir are confined to; relative to the config file. */
  root: nonEmpty.default('.'),
  delegation: z.array(subagentToolConfigSchema).default([]),
  /** fileSessions directory (relative to the config file); default: in-memory sessions. */
  sessions: nonEmpty.optional(),
  prompt: nonEmpty.optional(),
  /** Stdio servers start in the config file's directory. */
  mcpServers: z.record(stdioServerSchema.shape.name, mcpServerSchema).default({}),
});

export type ProviderEntry = z.infer<typeof providerSchema>;
type McpEntry = z.infer<typeof mcpServerSchema>;
const MCP_OPTION_KEYS = new Set(Object.keys(mcpOptionsShape));

/** An `mcpServers` entry as mcpTools' two arguments: the server (named by its key) and the options. */
export function mcpArguments(
  name: string,
  entry: McpEntry,
): { server: Record<string, unknown> & { name: string }; options: Record<string, unknown> } {
  const server: Record<string, unknown> & { name: string } = { name };
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) (MCP_OPTION_KEYS.has(key) ? options : server)[key] = value;
  return { server, options };
}
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
  // An AI SDK module is named like a path in a shell: relative to the config file.
  for (const provider of config.models)
    if (provider.kind === 'ai-sdk' && !URL.canParse(provider.module)) provider.module = resolve(base, provider.module);
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
    if ('apiKeyEnv' in provider && provider.apiKeyEnv !== undefined && !process.env[provider.apiKeyEnv]) {
      fail(`models[${i}].apiKeyEnv`, `environment variable ${provider.apiKeyEnv} is not set`);
    }
  });
}

/** The first issue (the deepest branch of a union), with its key path, plus how many more there are. */
function describeIssues(issues: z.core.$ZodIssue[]): string {
  const first = deepest(issues[0]);
  if (first === undefined) return 'invalid';
  const path = first.path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('')
    .replace(/^\./, '');
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  // A bad record key (an MCP server name) says why only in its nested issue.
  const message = first.code === 'invalid_key' ? (first.issues[0]?.message ?? first.message) : first.message;
  return `${path === '' ? '(root)' : path}: ${message}${more}`;
}
