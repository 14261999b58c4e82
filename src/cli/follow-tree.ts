/**
 * Feeds a TreeState from `brood.events()` (the one source the live views use). A child's label is its
 * descriptor's, read once from the session store when the child appears; the store serialises reads
 * with the runtime's appends, so reading a live session is safe.
 */
import type { Brood } from '../index.js';
import { isEventOf } from '../sessions/event-types.js';
import type { TreeState } from './tree-state.js';

/** Resolves when the stream ends (brood.close()). */
export async function followTree(
  brood: Brood,
  state: TreeState,
  onEvent?: (event: Parameters<TreeState['apply']>[0]) => void,
): Promise<void> {
  for await (const event of brood.events()) {
    state.apply(event);
    if (event.type === 'subagent-start') void labelChild(brood, state, event.childId);
    onEvent?.(event);
  }
}

async function labelChild(brood: Brood, state: TreeState, childId: string): Promise<void> {
  try {
    const { header, events } = await brood.sessions.read(childId);
    const node = state.nodes.get(childId);
    if (node !== undefined) node.createdAt = Math.min(node.createdAt, header.createdAt);
    const label = events.find((event) => isEventOf(event, 'subagent/descriptor'))?.data.label;
    if (typeof label === 'string') state.setLabel(childId, label);
  } catch {
    // The label is cosmetic: a child whose session cannot be read stays unlabelled.
  }
}
