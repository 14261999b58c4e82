/**
 * A session store wrapper that tells a test when events land, so suites synchronize on promises
 * instead of sleeping. Shared by every integration suite.
 */

import type { SessionEvent, SessionStore } from '../../src/index.js';
import { memorySessions } from '../../src/index.js';

type ClosableStore = SessionStore & { close?: () => Promise<void> };

export interface TappedStore {
  store: ClosableStore;
  /** Resolves with the first event (already appended or future) of `id` that has `type` and matches. */
  waitFor(id: string, type: string, match?: (event: SessionEvent) => boolean): Promise<SessionEvent>;
  /** Like waitFor, across every session; resolves with the session id. */
  waitForAny(type: string, match?: (event: SessionEvent) => boolean): Promise<string>;
  /** Every event appended so far, per session, in append order. */
  log(id: string): SessionEvent[];
}

interface Waiter {
  /** A session id, or '*' for any session. */
  id: string;
  test: (event: SessionEvent) => boolean;
  resolve: (event: SessionEvent, id: string) => void;
}

export function tapStore(inner: ClosableStore = memorySessions()): TappedStore {
  const logs = new Map<string, SessionEvent[]>();
  const waiters = new Set<Waiter>();
  const logOf = (id: string): SessionEvent[] => {
    let log = logs.get(id);
    if (!log) {
      log = [];
      logs.set(id, log);
    }
    return log;
  };
  const store: ClosableStore = {
    create: (header) => inner.create(header),
    async append(id, events) {
      await inner.append(id, events);
      for (const event of events) {
        logOf(id).push(event);
        for (const waiter of [...waiters]) {
          if ((waiter.id !== '*' && waiter.id !== id) || !waiter.test(event)) continue;
          waiters.delete(waiter);
          waiter.resolve(event, id);
        }
      }
    },
    flush: (id) => inner.flush(id),
    read: (id) => inner.read(id),
    list: () => inner.list(),
    ...(inner.close ? { close: () => inner.close!() } : {}),
  };
  const matcher =
    (type: string, match: (event: SessionEvent) => boolean) =>
    (event: SessionEvent): boolean =>
      event.type === type && match(event);
  return {
    store,
    log: (id) => [...logOf(id)],
    waitFor(id, type, match = () => true) {
      const test = matcher(type, match);
      const found = logOf(id).find(test);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.add({ id, test, resolve: (event) => resolve(event) }));
    },
    waitForAny(type, match = () => true) {
      const test = matcher(type, match);
      for (const [id, log] of logs) if (log.some(test)) return Promise.resolve(id);
      return new Promise((resolve) => waiters.add({ id: '*', test, resolve: (_event, id) => resolve(id) }));
    },
  };
}
