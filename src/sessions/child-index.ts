/**
 * Which child session a parent's tool call started: each child's `subagent/descriptor` records the
 * call id (a resumed parent finds the child of an interrupted call, or of a call whose result it had
 * logged, by it). One index per store, built from one list() and one read per child session; a miss
 * looks again at the sessions written since.
 */
import type { SessionEvent, SessionStore } from '../types.js';
import { knownEvent } from './event-types.js';

interface ChildIndex {
  /** parent id + call id → child id. */
  children: Map<string, string>;
  /** Every session already read. */
  seen: Set<string>;
}

const indexes = new WeakMap<SessionStore, Promise<ChildIndex>>();
/** A refresh misses are waiting for, per store: misses that arrive together share it. */
const refreshes = new WeakMap<SessionStore, Promise<ChildIndex>>();

/**
 * The child `parentId`'s call `callId` started, if any. Misses share one refresh: a recovered parent
 * re-issues its interrupted calls together, and each that had started no child would otherwise list
 * the whole store again (a 1,000-child tree: seconds).
 */
export async function childOfCall(store: SessionStore, parentId: string, callId: string): Promise<string | undefined> {
  const key = keyOf(parentId, callId);
  const found = (await childIndex(store)).children.get(key);
  if (found !== undefined) return found;
  let refresh = refreshes.get(store);
  if (refresh === undefined) {
    const started = childIndex(store, true).finally(() => refreshes.delete(store));
    refreshes.set(store, started);
    refresh = started;
  }
  return (await refresh).children.get(key);
}

/** One index per store; a refresh reads only the sessions it has not seen, one refresh at a time. */
function childIndex(store: SessionStore, refresh = false): Promise<ChildIndex> {
  const current = indexes.get(store);
  if (current !== undefined && !refresh) return current;
  const next = (current ?? Promise.resolve({ children: new Map(), seen: new Set<string>() })).then((index) =>
    readNew(store, index),
  );
  indexes.set(store, next);
  next.catch(() => indexes.delete(store));
  return next;
}

async function readNew(store: SessionStore, index: ChildIndex): Promise<ChildIndex> {
  const fresh = (await store.list()).filter((header) => !index.seen.has(header.id));
  for (const header of fresh) index.seen.add(header.id);
  await Promise.all(
    fresh.map(async (header) => {
      if (header.parentSession === undefined) return;
      const callId = subagentDescriptorOf((await store.read(header.id)).events)?.callId;
      if (typeof callId === 'string') index.children.set(keyOf(header.parentSession, callId), header.id);
    }),
  );
  return index;
}

function keyOf(parentId: string, callId: string): string {
  return `${parentId}\n${callId}`;
}

/** A child session's descriptor (its first `subagent/descriptor` event). */
export function subagentDescriptorOf(
  events: readonly SessionEvent[],
): { mode?: unknown; callId?: unknown; label?: unknown } | undefined {
  for (const logged of events) {
    const event = knownEvent(logged);
    if (event?.type === 'subagent/descriptor') return event.data;
  }
  return undefined;
}
