/**
 * brood.usage(): an agent's token usage read back from the session store, so it survives a restart.
 * Each logged `assistant/message` is one model request and counts once, in the session that made it;
 * a child's seed (a fork's copy of its parent's history) is its parent's, never counted again.
 */
import { addUsage, sumUsage } from '../models/usage.js';
import type { SessionEvent, SessionHeader, SessionStore, UsageNode } from '../types.js';
import { knownEvent } from './event-types.js';

export async function readUsageTree(store: SessionStore, rootId: string, subtree: boolean): Promise<UsageNode> {
  const childrenOf = new Map<string, string[]>();
  if (subtree) {
    for (const header of await store.list()) {
      if (header.parentSession === undefined) continue;
      const siblings = childrenOf.get(header.parentSession) ?? [];
      siblings.push(header.id);
      childrenOf.set(header.parentSession, siblings);
    }
  }
  const visiting = new Set<string>();
  const nodeOf = async (id: string): Promise<UsageNode> => {
    visiting.add(id);
    const { header, events } = await store.read(id);
    // A store's parent links could form a cycle (hand-written headers): each session is read once.
    const childIds = (childrenOf.get(id) ?? []).filter((child) => !visiting.has(child));
    const children = await Promise.all(childIds.map(nodeOf));
    const node = ownUsage(header, events);
    return { ...node, total: sumUsage(node.usage, ...children.map((child) => child.total)), children };
  };
  return nodeOf(rootId);
}

function ownUsage(header: SessionHeader, events: readonly SessionEvent[]): Omit<UsageNode, 'total' | 'children'> {
  const usage = { inputTokens: 0, outputTokens: 0 };
  let { provider, model } = header.model;
  let label: string | undefined;
  for (const logged of events.slice(header.seedLength ?? 0)) {
    const event = knownEvent(logged);
    if (event?.type === 'assistant/message') addUsage(usage, event.data.usage);
    else if (event?.type === 'model/request') ({ provider, model } = event.data);
    else if (event?.type === 'subagent/descriptor' && typeof event.data.label === 'string') label = event.data.label;
  }
  return { agentId: header.id, ...(label === undefined ? {} : { label }), provider, model, usage };
}
