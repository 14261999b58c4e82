import { z } from 'zod';
import { defineTool } from '../../../src/tools/define-tool.js';
import type { Agent, ToolDefinition, ToolResult } from '../../../src/types.js';

/** Only `id` matters to the tool system; everything else is never touched. */
export function fakeAgent(id = 'agent-1'): Agent {
  return { id, depth: 0, parentId: undefined, status: 'idle' } as unknown as Agent;
}

/** A no-arg tool that records each run, so tests can prove a body never ran. */
export function probeTool(
  name: string,
  runs: string[] = [],
  extra: Partial<Parameters<typeof defineTool>[0]> = {},
): ToolDefinition {
  return defineTool({
    name,
    description: `probe ${name}`,
    parameters: z.object({}),
    execute: () => {
      runs.push(name);
      return name;
    },
    ...extra,
  });
}

export function errorCode(result: ToolResult): string | undefined {
  return result.error?.code;
}
