/**
 * The delegation tool's configuration (SPEC §11): one strict zod schema with every key and default.
 * Every violation becomes a BroodError INVALID_CONFIG whose message names the offending key, because
 * the host reads it at `use()` time and must know what to fix without reading our source.
 */

import { z } from 'zod';
import { DEFAULTS } from '../defaults.js';
import { isDepthCap } from '../depth.js';
import { BroodError } from '../errors.js';
import { budgetSchema } from '../scheduler/budget.js';
import type { Budget } from '../scheduler/types.js';
import type { ReportDelivery } from '../subagents/types.js';
import { TOOL_NAME_PATTERN } from '../tools/define-tool.js';
import type { ModelRoute, ToolFilter } from '../types.js';
import { parseUntrusted, readUntrusted } from '../util/untrusted.js';

/** What a host passes to `subagentTool()`. */
export interface SubagentToolConfig {
  /** Provider name this instance binds (required); the model can never change it. */
  provider: string;
  /** Model-facing tool name, default `subagent`; distinct for every loaded instance. */
  toolName?: string;
  enableModelSelection?: boolean;
  /** Per-session host preference; mutually exclusive with enableModelSelection. */
  modelSelectionSettings?: boolean;
  enableRunInBackground?: boolean;
  backgroundMode?: 'one-shot' | 'continuable';
  /** Child model defaults: provider, model, reasoningEffort, maxTokens. */
  agentOptions?: Partial<ModelRoute>;
  persona?: string;
  toolFilter?: ToolFilter;
  /** Absolute delegation-depth cap (default 3), or 'provider-managed' (no cap sent). */
  maxDepth?: number | 'provider-managed';
  /** Model requests per turn for this instance's children (needs the provider's `maxSteps` capability). */
  maxSteps?: number;
  /** How a continuable child's `report` reaches its parent: 'next-step' (default) or 'quiet'. */
  reportDelivery?: ReportDelivery;
  /** The largest report a continuable child may make, in UTF-8 bytes (default 1 MiB); a larger one is refused to the child. */
  maxReportBytes?: number;
  /** Children's calls that need approval: 'deny' or 'ask' (default: createBrood's `approvals.children`; tighten-only). */
  approvals?: 'deny' | 'ask';
  /** A ceiling on each child's run (the parent's remainder may tighten it further). */
  budget?: Budget;
}

/** The validated config with defaults applied; omitted optional controls stay absent. */
export interface ResolvedSubagentToolConfig {
  readonly provider: string;
  readonly toolName: string;
  readonly enableModelSelection: boolean;
  readonly modelSelectionSettings: boolean;
  readonly enableRunInBackground: boolean;
  readonly backgroundMode: 'one-shot' | 'continuable';
  readonly agentOptions?: Readonly<Partial<ModelRoute>>;
  readonly persona?: string;
  readonly toolFilter?: Readonly<ToolFilter>;
  readonly maxDepth: number | 'provider-managed';
  readonly maxSteps?: number;
  /** Set for continuable instances only. */
  readonly reportDelivery?: ReportDelivery;
  readonly maxReportBytes?: number;
  readonly approvals?: 'deny' | 'ask';
  readonly budget?: Readonly<Budget>;
}

function isPositiveSafeInteger(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

const toolFilterSchema = z
  .strictObject({
    allow: z.array(z.string()).optional(),
    deny: z.array(z.string()).optional(),
  })
  .refine((filter) => filter.allow !== undefined || filter.deny !== undefined, {
    message: 'needs an allow or a deny list',
  });

const agentOptionsSchema = z.strictObject({
  provider: z.string().min(1, 'must be a non-empty string').optional(),
  model: z.string().min(1, 'must be a non-empty string').optional(),
  reasoningEffort: z.string().min(1, 'must be a non-empty string').optional(),
  maxTokens: z
    .unknown()
    .refine(isPositiveSafeInteger, { message: 'must be a positive safe integer' })
    .transform((value) => value as number)
    .optional(),
});

const maxDepthSchema = z
  .unknown()
  .refine((value) => value === 'provider-managed' || isDepthCap(value), {
    message: "must be a non-negative safe integer or 'provider-managed'",
  })
  .transform((value) => value as number | 'provider-managed');

/** What `subagentTool()` accepts (also each entry of `brood run`'s `delegation`). */
export const subagentToolConfigSchema = z
  .strictObject({
    provider: z.string().min(1, 'must be a non-empty provider name'),
    toolName: z.string().regex(TOOL_NAME_PATTERN, `must match ${TOOL_NAME_PATTERN.source}`).optional(),
    enableModelSelection: z.boolean().optional(),
    modelSelectionSettings: z.boolean().optional(),
    enableRunInBackground: z.boolean().optional(),
    backgroundMode: z.enum(['one-shot', 'continuable']).optional(),
    agentOptions: agentOptionsSchema.optional(),
    persona: z.string().optional(),
    toolFilter: toolFilterSchema.optional(),
    maxDepth: maxDepthSchema.optional(),
    maxSteps: z
      .unknown()
      .refine(isPositiveSafeInteger, { message: 'must be a positive safe integer' })
      .transform((value) => value as number)
      .optional(),
    reportDelivery: z.enum(['next-step', 'quiet']).optional(),
    maxReportBytes: z
      .unknown()
      .refine(isPositiveSafeInteger, { message: 'must be a positive safe integer' })
      .transform((value) => value as number)
      .optional(),
    approvals: z.enum(['deny', 'ask']).optional(),
    budget: budgetSchema.optional(),
  })
  .refine((config) => !(config.enableModelSelection === true && config.modelSelectionSettings === true), {
    message: 'is mutually exclusive with modelSelectionSettings (enable one of them)',
    path: ['enableModelSelection'],
  })
  .refine((config) => config.reportDelivery === undefined || config.backgroundMode === 'continuable', {
    message: "applies only to backgroundMode 'continuable' (only continuable children report)",
    path: ['reportDelivery'],
  })
  .refine((config) => config.maxReportBytes === undefined || config.backgroundMode === 'continuable', {
    message: "applies only to backgroundMode 'continuable' (only continuable children report)",
    path: ['maxReportBytes'],
  });

/** Validates a raw config (SPEC §11); throws INVALID_CONFIG naming the key. */
export function parseSubagentToolConfig(input: unknown): ResolvedSubagentToolConfig {
  const isObject = readUntrusted(
    'INVALID_CONFIG',
    'subagentTool config',
    () => typeof input === 'object' && input !== null && !Array.isArray(input),
  );
  if (!isObject) {
    throw new BroodError('INVALID_CONFIG', 'subagentTool config must be an object with at least a provider');
  }
  const parsed = parseUntrusted(subagentToolConfigSchema, input, 'INVALID_CONFIG', 'subagentTool config');
  if (!parsed.success) throw configError(parsed.error);
  return resolve(parsed.data);
}

type ParsedConfig = z.output<typeof subagentToolConfigSchema>;

/** Applies defaults and copies the caller's arrays/objects so later mutation cannot reach us. */
function resolve(data: ParsedConfig): ResolvedSubagentToolConfig {
  const config: {
    -readonly [K in keyof ResolvedSubagentToolConfig]: ResolvedSubagentToolConfig[K];
  } = {
    provider: data.provider,
    toolName: data.toolName ?? DEFAULTS.subagentTool.toolName,
    enableModelSelection: data.enableModelSelection ?? false,
    modelSelectionSettings: data.modelSelectionSettings ?? false,
    enableRunInBackground: data.enableRunInBackground ?? true,
    backgroundMode: data.backgroundMode ?? 'one-shot',
    maxDepth: data.maxDepth ?? DEFAULTS.subagentTool.maxDepth,
  };
  if (data.agentOptions !== undefined) config.agentOptions = Object.freeze(copyRoute(data.agentOptions));
  if (data.persona !== undefined) config.persona = data.persona;
  if (data.maxSteps !== undefined) config.maxSteps = data.maxSteps;
  if (data.reportDelivery !== undefined) config.reportDelivery = data.reportDelivery;
  if (data.maxReportBytes !== undefined) config.maxReportBytes = data.maxReportBytes;
  if (data.approvals !== undefined) config.approvals = data.approvals;
  if (data.budget !== undefined) config.budget = Object.freeze(definedOnly(data.budget));
  if (data.toolFilter !== undefined) config.toolFilter = Object.freeze(copyFilter(data.toolFilter));
  return Object.freeze(config);
}

function definedOnly(budget: { [K in keyof Budget]?: number | undefined }): Budget {
  return Object.fromEntries(Object.entries(budget).filter(([, value]) => value !== undefined)) as Budget;
}

/** Only keys the caller gave: an absent field must stay absent (not `undefined`) in start requests. */
function copyRoute(options: z.output<typeof agentOptionsSchema>): Partial<ModelRoute> {
  const route: Partial<ModelRoute> = {};
  if (options.provider !== undefined) route.provider = options.provider;
  if (options.model !== undefined) route.model = options.model;
  if (options.reasoningEffort !== undefined) route.reasoningEffort = options.reasoningEffort;
  if (options.maxTokens !== undefined) route.maxTokens = options.maxTokens;
  return route;
}

function copyFilter(filter: ToolFilter): ToolFilter {
  const copy: ToolFilter = {};
  if (filter.allow !== undefined) copy.allow = Object.freeze([...filter.allow]) as string[];
  if (filter.deny !== undefined) copy.deny = Object.freeze([...filter.deny]) as string[];
  return copy;
}

/** One message per issue, each naming its key path, so a host sees every problem at once. */
function configError(error: z.ZodError): BroodError {
  const problems = error.issues.map(describeIssue);
  return new BroodError('INVALID_CONFIG', `invalid subagentTool config: ${problems.join('; ')}`, {
    details: { keys: error.issues.map(issueKey) },
  });
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    const where = issue.path.length === 0 ? '' : ` in ${keyPath(issue.path)}`;
    return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}${where}`;
  }
  if (issue.path.length === 0) return issue.message;
  return `${keyPath(issue.path)} ${issueText(issue)}`;
}

/** zod's default type messages ("Invalid input: expected boolean, received string") read fine after the key. */
function issueText(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && issue.input === undefined) return 'is required';
  return /^(must|needs|is) /.test(issue.message) ? issue.message : `is invalid: ${issue.message}`;
}

function issueKey(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return issue.keys.join(',');
  return keyPath(issue.path);
}

function keyPath(path: readonly PropertyKey[]): string {
  return path
    .map((key) => (typeof key === 'number' ? `[${key}]` : String(key)))
    .join('.')
    .replace(/\.\[/g, '[');
}
