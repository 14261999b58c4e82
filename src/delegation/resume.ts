/**
 * A delegation call a crash interrupted (its `tool/call` logged, no result): the child it started is
 * found by the call id its descriptor records. A foreground child interrupted mid-turn is resumed in
 * its own session and the call waits for it; one that finished gives its logged result; a
 * background child is resumed and the call answers as its first run did. No child: the call never
 * started one, and starts it now.
 */
import type { AgentImpl } from '../agents/agent.js';
import { openTurnOf } from '../agents/open-turn.js';
import { pendingResultOf } from '../agents/recovered-turn.js';
import type { Brood } from '../brood.js';
import { sumUsage } from '../models/usage.js';
import { pluginAccess } from '../runtime/plugin-access.js';
import { knownEvent } from '../sessions/event-types.js';
import { toSubagentResult } from '../subagents/runs.js';
import type { SubagentResult } from '../subagents/types.js';
import type { Agent, SessionEvent, SessionStore, StopReason, TurnResult, Usage } from '../types.js';

export interface InterruptedChild {
  id: string;
  continuable: boolean;
  /** The child's outcome: a foreground call waits for it, a background job is built on it. */
  result: Promise<SubagentResult>;
  cancel(): void;
  dispose(): Promise<void>;
}

/** Per store: parent id + call id → child id, from one list() and one read per child session (cached). */
const indexes = new WeakMap<SessionStore, Promise<ChildIndex>>();

export async function interruptedChild(
  brood: Brood,
  parent: Agent,
  callId: string,
  background: boolean,
  context?: unknown,
): Promise<InterruptedChild | undefined> {
  const childId = await childOf(brood.sessions, keyOf(parent.id, callId));
  if (childId === undefined) return undefined;
  const { events } = await brood.sessions.read(childId);
  const continuable = descriptorOf(events)?.mode === 'continuable';
  const logged = endedResult(events);
  const parentImpl = pluginAccess(brood).agentImpl(parent);
  if (logged !== undefined && !continuable && openTurnOf(events) === undefined) {
    if (!background) parentImpl?.addChildUsage(logged.usage);
    const done = { cancel: () => undefined, dispose: () => Promise.resolve() };
    return { id: childId, continuable, result: Promise.resolve(toSubagentResult(logged)), ...done };
  }
  // The resumed child's turns serve this call again: they read its per-request context.
  const child = (await brood.resumeAgent(childId, context === undefined ? {} : { context })) as AgentImpl;
  const result = continuable ? Promise.resolve(logged ?? emptyResult('completed')) : resultOf(child, events);
  // A parent waiting on its foreground child holds no turn slot meanwhile (limits.agents), as on a first run.
  const waited =
    background || continuable || parentImpl === undefined ? result : (parentImpl.lease?.lend(result) ?? result);
  const settled = waited.then(async (turn) => {
    // A foreground run rolls up into the parent's turn and its child is disposed once it is done
    // (a background job's run is disposed by its job).
    if (!continuable && !background) {
      parentImpl?.addChildUsage(turn.usage, turn.usageTree);
      await child.dispose().catch(() => undefined);
    }
    return toSubagentResult(turn);
  });
  const cancel = (): void => {
    if (!child.isDisposed) child.cancel('parent');
  };
  return { id: childId, continuable, result: settled, cancel, dispose: () => child.dispose() };
}

/** The resumed turn's result, or the result of the prompt the child never got to (it runs now). */
function resultOf(child: AgentImpl, events: SessionEvent[]): Promise<TurnResult> {
  return (
    pendingResultOf(child, events) ??
    Promise.resolve({ ...emptyResult('error'), diagnostic: 'the child had no turn to resume' })
  );
}

/** A refresh misses are waiting for, per store: misses that arrive together share it. */
const refreshes = new WeakMap<SessionStore, Promise<ChildIndex>>();

/**
 * A miss looks again at the sessions written since the index was read (another process may have).
 * Misses share one refresh: a recovered parent re-issues its interrupted calls together, and each that
 * had started no child would otherwise list the whole store again (a 1,000-child tree: seconds).
 */
async function childOf(store: SessionStore, key: string): Promise<string | undefined> {
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

interface ChildIndex {
  /** parent id + call id → child id. */
  children: Map<string, string>;
  /** Every session already read. */
  seen: Set<string>;
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
      const callId = descriptorOf((await store.read(header.id)).events)?.callId;
      if (typeof callId === 'string') index.children.set(keyOf(header.parentSession, callId), header.id);
    }),
  );
  return index;
}

function keyOf(parentId: string, callId: string): string {
  return `${parentId}\n${callId}`;
}

function descriptorOf(events: SessionEvent[]): { mode?: unknown; callId?: unknown } | undefined {
  for (const logged of events) {
    const event = knownEvent(logged);
    if (event?.type === 'subagent/descriptor') return event.data;
  }
  return undefined;
}

/** The last ended turn's result as its log shows it, when no turn is open after it. */
function endedResult(events: SessionEvent[]): TurnResult | undefined {
  let usage: Usage = { inputTokens: 0, outputTokens: 0 };
  let output = '';
  let ended: TurnResult | undefined;
  for (const logged of events) {
    const event = knownEvent(logged);
    if (event?.type === 'turn/start') {
      usage = { inputTokens: 0, outputTokens: 0 };
      output = '';
      ended = undefined;
    } else if (event?.type === 'assistant/message') {
      usage = sumUsage(usage, event.data.usage);
      if (event.data.text.trim() !== '') output = event.data.text;
    } else if (event?.type === 'turn/end') {
      const diagnostic = event.data.diagnostic === undefined ? {} : { diagnostic: event.data.diagnostic };
      ended = { ...emptyResult(event.data.reason), output, usage, ...diagnostic };
    }
  }
  return ended;
}

function emptyResult(stopReason: StopReason): TurnResult {
  const usage = { inputTokens: 0, outputTokens: 0 };
  return {
    output: '',
    stopReason,
    usage,
    usageTree: { agentId: '', provider: '', model: '', usage, total: usage, children: [] },
  };
}
