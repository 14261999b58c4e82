/**
 * Typed structured output of one turn: a top-level `agent.run(text, { outputSchema })`, or a one-shot
 * child started with an outputSchema (its prompt's turn). For that turn the model is presented a
 * `structured_output` tool. It is a turn tool, not a registration: it appears in the turn's requests
 * and tool events, never in `agent.tools.view()`, and it is gone when the turn ends. The last valid
 * call wins; a turn that completes without one ends `error` with the `missing` diagnostic.
 */

import type { z } from 'zod';
import { BroodError, errorMessage } from '../errors.js';
import type { Budget } from '../scheduler/types.js';
import { defineTool } from '../tools/define-tool.js';
import { executeResolved } from '../tools/execute.js';
import { STRUCTURED_OUTPUT_TOOL } from '../tools/layer.js';
import type { Agent, JsonSchemaObject, ToolDefinition, ToolResult, ToolSchema } from '../types.js';
import { describe } from '../util/describe.js';

export { STRUCTURED_OUTPUT_TOOL };

export interface StructuredTurn {
  readonly schema: ToolSchema;
  /** Validates and records one call; invalid arguments are an errored result the model can retry. */
  execute(args: string, callId: string, agent: Agent): Promise<ToolResult>;
  readonly set: boolean;
  readonly value: unknown;
  /** The diagnostic of a turn that completed without a valid call. */
  readonly missing: string;
}

export const MISSING_TOP_LEVEL = `the turn ended without a valid ${STRUCTURED_OUTPUT_TOOL} call`;
export const MISSING_CHILD = `the child finished without a valid ${STRUCTURED_OUTPUT_TOOL} call`;

/**
 * Throws INVALID_ARGS for a schema that is neither zod nor a JSON Schema object, and for one whose
 * root is not an object schema: the model answers through a tool call, whose arguments are always an
 * object, so `z.string()` could never be met (wrap it: `z.object({ answer: z.string() })`).
 */
export function structuredTurn(
  outputSchema: z.ZodType | JsonSchemaObject,
  missing: string = MISSING_TOP_LEVEL,
  /** A turn resumed after a crash: the value its log shows was recorded already. */
  recorded?: { value: unknown },
): StructuredTurn {
  let set = recorded !== undefined;
  let value: unknown = recorded?.value;
  const tool = outputTool(outputSchema, (args) => {
    value = args;
    set = true;
  });
  const resolved = {
    name: tool.name,
    schema: { name: tool.name, description: tool.description, parameters: tool.parameters },
    definition: tool,
    layer: 'agent' as const,
  };
  return {
    schema: resolved.schema,
    missing,
    execute: (args, callId, agent) =>
      executeResolved(
        { lookup: (name) => (name === tool.name ? resolved : undefined), agent: () => agent },
        { name: tool.name, arguments: args, callId },
      ),
    get set() {
      return set;
    },
    get value() {
      return value;
    },
  };
}

function outputTool(outputSchema: z.ZodType | JsonSchemaObject, record: (args: unknown) => void): ToolDefinition {
  let tool: ToolDefinition;
  try {
    tool = defineTool({
      name: STRUCTURED_OUTPUT_TOOL,
      description:
        'Record your final answer as structured data matching the schema. The last valid call wins; then finish your turn.',
      parameters: outputSchema as z.ZodType<unknown>,
      execute: (args: unknown) => {
        record(args);
        return 'ok';
      },
    });
  } catch (error) {
    throw new BroodError('INVALID_ARGS', `outputSchema: ${errorMessage(error)}`);
  }
  const root = tool.parameters.type;
  if (root !== 'object') {
    const has = root === undefined ? 'has no type' : `has type ${describe(root)}`;
    throw new BroodError(
      'INVALID_ARGS',
      `outputSchema must describe an object (its root ${has}): the model answers through a tool call, whose arguments are an object; wrap the value, e.g. z.object({ answer: schema })`,
    );
  }
  return tool;
}

/**
 * What a message's session events record of its own run options (`user/message`, and `turn/start`
 * when a turn claims it), so a turn that takes or resumes it after a crash keeps them. Never the
 * per-request context: it may hold credentials.
 */
export function recordedRunOptions(
  budget: Budget | undefined,
  structured: StructuredTurn | undefined,
): { budget?: Budget; outputSchema?: JsonSchemaObject } {
  return {
    ...(budget === undefined ? {} : { budget }),
    ...(structured === undefined ? {} : { outputSchema: structured.schema.parameters }),
  };
}
