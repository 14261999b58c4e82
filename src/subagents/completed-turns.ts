/**
 * A fork child's seed: the parent's completed turns (and the history it was created with) as session
 * events. Events of the turn in progress, messages no completed turn claimed, and the parent's own
 * descriptors are left out.
 */
import type { AgentImpl } from '../agents/agent.js';
import { isEventOf, messagesTaken, type SessionEventType } from '../sessions/event-types.js';
import type { SubagentCore } from './core.js';

const NOT_INHERITED = new Set<string>([
  'agent/descriptor',
  'subagent/descriptor',
  'subagent/model-selection-enabled',
] satisfies SessionEventType[]);

export async function completedTurns(core: SubagentCore, parent: AgentImpl): Promise<unknown[]> {
  await parent.writer.flush();
  const { events } = await core.store.read(parent.id);
  let lastEnd = -1;
  events.forEach((event, index) => {
    // The conversation the parent was created with counts as completed, even before its first turn ends.
    if (event.type === 'turn/end' || event.type === 'agent/history') lastEnd = index;
  });
  const completed = events.slice(0, lastEnd + 1);
  const claimed = new Set<string>();
  for (const event of completed) {
    for (const id of messagesTaken(event)) claimed.add(id);
  }
  return completed
    .filter((event) => !NOT_INHERITED.has(event.type))
    .filter((event) => !isEventOf(event, 'user/message') || claimed.has(event.data.id))
    .map((event) => ({ type: event.type, data: event.data }));
}
