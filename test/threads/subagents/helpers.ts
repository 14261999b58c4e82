/**
 * Helpers for the subagent runtime tests: a brood with a tapped store (await "this event landed"
 * instead of sleeping), recorded lifecycle events, and probes for "nothing was created".
 */
import { rm } from 'node:fs/promises';
import { threadId as mainThreadId } from 'node:worker_threads';
import { afterEach } from 'vitest';
import type {
  Agent,
  Brood,
  BroodOptions,
  SessionEvent,
  SessionHeader,
  SessionStore,
  SubagentEndEvent,
  SubagentStartEvent,
} from '../../../src/index.js';
import { memorySessions, scriptedModels } from '../../../src/index.js';
import { runtimeOf } from '../../../src/runtime/plugin-access.js';
import { type Deferred, deferred } from '../../support/deferred.js';
import { ofType } from '../../support/events.js';
import { behaviourBrood } from '../../support/runtime.js';
import { type TappedStore, tapStore } from '../../support/tap-store.js';

export { mainThreadId };

export type Script = NonNullable<Parameters<typeof scriptedModels>[0]['scripts']>[number];

export interface Harness {
  brood: Brood;
  tap: TappedStore;
  starts: SubagentStartEvent[];
  ends: SubagentEndEvent[];
  /** start/end in emission order, as `start:<id>` / `end:<id>:<stopReason>`. */
  order: string[];
  /** Resolves with the end event of a child id. */
  endOf(id: string): Promise<SubagentEndEvent>;
  /** Every session header in the store. */
  headers(): Promise<SessionHeader[]>;
  events(id: string): Promise<SessionEvent[]>;
  /** Live agents in the runtime (the agent table). */
  liveAgents(): number;
}

export function harness(options: BroodOptions & { scripts?: Script[]; inner?: SessionStore } = {}): Harness {
  const { scripts, inner, ...rest } = options;
  const tap = tapStore(inner ?? memorySessions());
  const brood = behaviourBrood({
    models: [scriptedModels({ id: 'scripted', scripts: scripts ?? [] })],
    sessions: tap.store,
    ...rest,
  });
  const starts: SubagentStartEvent[] = [];
  const ends: SubagentEndEvent[] = [];
  const order: string[] = [];
  const endWaiters = new Map<string, Deferred<SubagentEndEvent>>();
  const waiterFor = (id: string): Deferred<SubagentEndEvent> => {
    let waiter = endWaiters.get(id);
    if (!waiter) {
      waiter = deferred<SubagentEndEvent>();
      endWaiters.set(id, waiter);
    }
    return waiter;
  };
  brood.subagents.on('start', (info: SubagentStartEvent) => {
    starts.push(info);
    order.push(`start:${info.id}`);
  });
  brood.subagents.on('end', (info: SubagentEndEvent) => {
    ends.push(info);
    order.push(`end:${info.id}:${info.stopReason}`);
    waiterFor(info.id).resolve(info);
  });
  return {
    brood,
    tap,
    starts,
    ends,
    order,
    endOf: (id) => waiterFor(id).promise,
    headers: () => brood.sessions.list(),
    events: async (id) => (await brood.sessions.read(id)).events,
    liveAgents: () => runtimeOf(brood).agents.size,
  };
}

/** The first model/request of a session (waits for it). */
export async function firstRequest(h: Harness, id: string): Promise<SessionEvent['data']> {
  return (await h.tap.waitFor(id, 'model/request')).data;
}

/** Waits until a turn of `id` with this number ended. */
export function turnEnded(h: Harness, id: string, turn: number): Promise<SessionEvent> {
  return h.tap.waitFor(id, 'turn/end', (event) => event.data.turn === turn);
}

/** model/request events across every session in the store. */
export async function allRequests(h: Harness): Promise<{ id: string; data: SessionEvent['data'] }[]> {
  const out: { id: string; data: SessionEvent['data'] }[] = [];
  for (const header of await h.headers()) {
    for (const event of ofType(await h.events(header.id), 'model/request'))
      out.push({ id: header.id, data: event.data });
  }
  return out;
}

export async function startChild(
  h: Harness,
  parent: Agent,
  prompt: string,
  extra: Record<string, unknown> = {},
  provider = 'spawn',
) {
  return h.brood.subagents.start(provider, { parent, prompt, signal: new AbortController().signal, ...extra });
}

/** Resolves with the n-th (1-based) event of `id` of this type that matches. */
export function nth(
  h: Harness,
  id: string,
  type: string,
  n: number,
  match: (event: SessionEvent) => boolean = () => true,
): Promise<SessionEvent> {
  let count = 0;
  return h.tap.waitFor(id, type, (event) => match(event) && ++count === n);
}

export const isNotice = (event: SessionEvent): boolean => event.data.source === 'subagent-settled';

/** Runtimes and temp directories a test file opens, closed and removed after each test. */
export function closeAfterEach(): { open: Harness[]; dirs: string[] } {
  const open: Harness[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const h of open.splice(0)) await h.brood.close();
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  return { open, dirs };
}
