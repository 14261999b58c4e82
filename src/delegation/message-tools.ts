/**
 * send_message (SPEC §11.7): queues a later turn in a continuable child's conversation through the
 * runtime's `followup`, which owns authorization (UNAUTHORIZED) and resumability (NOT_RESUMABLE).
 * Errors keep their code, so the model learns why a message was refused.
 */
import { z } from 'zod';
import type { Brood, BroodPlugin } from '../brood.js';
import { defineTool } from '../tools/define-tool.js';
import type { ToolDefinition } from '../types.js';
import type { Disposer } from '../util/disposer.js';
import { registerAll } from './job-tools.js';
import { acquireShared, callingAgent, subagentsOf } from './shared.js';

export const MESSAGE_TOOLS_KEY = 'delegation:message-tools';

export function messageTools(): BroodPlugin {
  return { name: 'messageTools', install: (brood) => installMessageTools(brood) };
}

export function installMessageTools(brood: Brood): Disposer {
  return acquireShared(brood, MESSAGE_TOOLS_KEY, () => registerAll(brood, [sendMessageTool(brood)]));
}

export function sendMessageText(subagentId: string): string {
  return `message queued as the next turn for subagent ${subagentId}`;
}

function sendMessageTool(brood: Brood): ToolDefinition {
  return defineTool({
    name: 'send_message',
    description:
      'Send more work to a subagent you started in the background: the message is queued as its next turn ' +
      'in the same conversation, and a notice arrives when that work settles.',
    parameters: z.object({
      subagent_id: z.string().describe('The id returned when the subagent started.'),
      message: z.string().describe('The next instruction for the subagent.'),
    }),
    async execute(args, ctx) {
      const parent = callingAgent(ctx, 'send_message');
      await subagentsOf(brood).followup(parent, args.subagent_id, args.message, {
        signal: ctx.signal,
        ...(ctx.context === undefined ? {} : { context: ctx.context }),
      });
      return sendMessageText(args.subagent_id);
    },
  });
}
