/**
 * The served tools' arguments. Checked here rather than by the SDK, so a bad call is an `isError`
 * result naming the brood error code (INVALID_ARGS), never a protocol error.
 */
import { z } from 'zod';
import { BroodError } from '../../errors.js';
import { formatPath } from '../../tools/define-tool.js';
import { refuseSchemaRegexes } from '../../util/untrusted-schema.js';

export interface DelegateArgs {
  description: string;
  prompt: string;
  /** From `model: "<provider>/<model>"`. */
  provider?: string;
  model?: string;
  outputSchema?: Record<string, unknown>;
}

export const delegateArgsSchema = z.strictObject({
  description: z.string().min(1, 'must be a non-empty string').describe('A short label for the work (3-8 words).'),
  prompt: z.string().min(1, 'must be a non-empty string').describe('The complete task for the subagent.'),
  model: z
    .string()
    .regex(/^[^/]+\/.+$/, 'must be "<provider>/<model>"')
    .optional()
    .describe('"<provider>/<model>" as list_models shows them (when the server allows model selection).'),
  output_schema: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      'A JSON Schema object: the subagent answers with data of this shape (returned as structuredContent). ' +
        'No pattern, patternProperties or format keywords.',
    ),
});

export const listModelsArgsSchema = z.strictObject({
  provider: z.string().optional().describe('A provider id: list its models.'),
  model: z.string().optional().describe("With provider: show this model's reasoning efforts and default."),
});

export function parseDelegateArgs(raw: unknown, selection: boolean): DelegateArgs {
  const args = parse(delegateArgsSchema, raw, 'delegate');
  const out: DelegateArgs = { description: args.description, prompt: args.prompt };
  if (args.model !== undefined) {
    if (!selection) throw new BroodError('INVALID_ARGS', 'model: model selection is disabled for this server');
    const slash = args.model.indexOf('/');
    out.provider = args.model.slice(0, slash);
    out.model = args.model.slice(slash + 1);
  }
  if (args.output_schema !== undefined) {
    // The client is untrusted and its schema's validator runs on the server's main thread.
    refuseSchemaRegexes(args.output_schema, 'output_schema');
    out.outputSchema = args.output_schema;
  }
  return out;
}

export const continueArgsSchema = z.strictObject({
  child_id: z.string().min(1, 'must be a non-empty string').describe('The child_id a delegate call returned.'),
  message: z.string().min(1, 'must be a non-empty string').describe('The next instruction for that subagent.'),
});

export function parseContinueArgs(raw: unknown): z.output<typeof continueArgsSchema> {
  return parse(continueArgsSchema, raw, 'continue');
}

export function parseListModelsArgs(raw: unknown): z.output<typeof listModelsArgsSchema> {
  return parse(listModelsArgsSchema, raw, 'list_models');
}

function parse<S extends z.ZodType>(schema: S, raw: unknown, tool: string): z.output<S> {
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue === undefined ? '(root)' : formatPath(issue.path);
  throw new BroodError('INVALID_ARGS', `invalid arguments for ${tool} at ${where}: ${issue?.message ?? 'invalid'}`);
}

/** The JSON Schema a client sees in tools/list. */
export function inputSchemaOf(schema: z.ZodType): { type: 'object'; [key: string]: unknown } {
  const json = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  delete json.$schema;
  return { ...json, type: 'object' };
}
