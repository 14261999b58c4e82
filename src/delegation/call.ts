/**
 * Arguments of one delegation call (SPEC §11.2, §11.4, §11.9) and the start request built from them
 * (§11.3). The tool checks its optional fields itself: the registered schema may omit a field that a
 * model still sends, and a forced field must be refused, never silently stripped or obeyed.
 */
import { z } from 'zod';
import { BroodError } from '../errors.js';
import type { SubagentStartRequest } from '../subagents/types.js';
import { formatPath } from '../tools/define-tool.js';
import type { Agent, ModelRoute, ToolFilter } from '../types.js';
import type { ResolvedSubagentToolConfig } from './config.js';

export interface Selection {
  provider?: string;
  model?: string;
  reasoningEffort?: string;
}

export interface DelegationCall {
  description: string;
  prompt: string;
  /** The route: true = background (one-shot job or continuable child), false = foreground. */
  background: boolean;
  selection: Selection | undefined;
}

/** Loose so unknown keys survive to the checks below instead of vanishing in the parse. */
const callSchema = z.looseObject({
  description: z.string().min(1, 'must be a non-empty string'),
  prompt: z.string(),
  run_in_background: z.boolean().optional(),
  provider: z.string().optional(),
  model: z.string().optional(),
  reasoning_effort: z.string().optional(),
});

const SELECTION_FIELDS = ['provider', 'model', 'reasoning_effort'] as const;

type CallConfig = Pick<ResolvedSubagentToolConfig, 'toolName' | 'enableRunInBackground' | 'backgroundMode'>;

/** Validates the model's arguments for this instance; `selection` is this agent's visibility (§11.9). */
export function parseCall(config: CallConfig, raw: unknown, selection: boolean): DelegationCall {
  const parsed = callSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined ? '(root)' : formatPath(issue.path);
    throw invalidArgs(`invalid arguments for ${config.toolName} at ${where}: ${issue?.message ?? 'invalid'}`);
  }
  const args = parsed.data;
  if (!config.enableRunInBackground && args.run_in_background === true) {
    // An explicit false asks for the only route that exists, so only `true` is refused.
    throw invalidArgs('run_in_background is disabled for this tool instance');
  }
  return {
    description: args.description,
    prompt: args.prompt,
    background: config.enableRunInBackground && (args.run_in_background ?? config.backgroundMode === 'continuable'),
    selection: parseSelection(args, selection),
  };
}

function parseSelection(args: z.output<typeof callSchema>, enabled: boolean): Selection | undefined {
  const given = SELECTION_FIELDS.filter((field) => args[field] !== undefined);
  if (given.length === 0) return undefined;
  if (!enabled) {
    throw invalidArgs(`${given.join(', ')}: model selection is disabled for this tool instance`);
  }
  if ((args.provider === undefined) !== (args.model === undefined)) {
    throw invalidArgs('give provider and model together, or only reasoning_effort, or none of them');
  }
  const selection: Selection = {};
  if (args.provider !== undefined) selection.provider = args.provider;
  if (args.model !== undefined) selection.model = args.model;
  if (args.reasoning_effort !== undefined) selection.reasoningEffort = args.reasoning_effort;
  return selection;
}

/**
 * The call's selection in front of the configured child defaults. Naming another provider/model
 * without an effort drops the configured effort (the new model's default applies), while the
 * configured maxTokens is deployment-owned and always kept.
 */
export function childAgentOptions(
  configured: Readonly<Partial<ModelRoute>> | undefined,
  selection: Selection | undefined,
): Partial<ModelRoute> | undefined {
  if (selection === undefined) return configured === undefined ? undefined : { ...configured };
  if (selection.provider === undefined) return { ...configured, ...selection };
  const route: Partial<ModelRoute> = { provider: selection.provider };
  if (selection.model !== undefined) route.model = selection.model;
  const sameRoute = configured?.provider === selection.provider && configured.model === selection.model;
  const effort = selection.reasoningEffort ?? (sameRoute ? configured?.reasoningEffort : undefined);
  if (effort !== undefined) route.reasoningEffort = effort;
  if (configured?.maxTokens !== undefined) route.maxTokens = configured.maxTokens;
  return route;
}

type RequestConfig = Pick<
  ResolvedSubagentToolConfig,
  'persona' | 'toolFilter' | 'maxDepth' | 'agentOptions' | 'maxSteps' | 'approvals' | 'budget'
>;

/** The start request without a signal (the route decides whose signal the child gets). */
export function buildRequest(
  config: RequestConfig,
  parent: Agent,
  call: Pick<DelegationCall, 'prompt' | 'description' | 'selection'>,
): Omit<SubagentStartRequest, 'signal'> {
  const request: Omit<SubagentStartRequest, 'signal'> = { parent, prompt: call.prompt, label: call.description };
  if (config.persona !== undefined) request.persona = config.persona;
  // Fresh copies per call: the runtime may keep what it is given.
  if (config.toolFilter !== undefined) request.toolFilter = copyFilter(config.toolFilter);
  if (typeof config.maxDepth === 'number') request.maxDepth = config.maxDepth;
  if (config.maxSteps !== undefined) request.maxSteps = config.maxSteps;
  if (config.approvals !== undefined) request.approvals = config.approvals;
  if (config.budget !== undefined) request.budget = { ...config.budget };
  const agentOptions = childAgentOptions(config.agentOptions, call.selection);
  if (agentOptions !== undefined) request.agentOptions = agentOptions;
  return request;
}

function copyFilter(filter: Readonly<ToolFilter>): ToolFilter {
  const copy: ToolFilter = {};
  if (filter.allow !== undefined) copy.allow = [...filter.allow];
  if (filter.deny !== undefined) copy.deny = [...filter.deny];
  return copy;
}

function invalidArgs(message: string): BroodError {
  return new BroodError('INVALID_ARGS', message);
}
