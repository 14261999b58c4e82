/**
 * A SessionStore wrapper that reports every successful create/append. The runtime writes every
 * lifecycle fact to its store (turns, requests, usage), so observing the store gives the live view
 * what lifecycle events alone do not carry — without any hook into the library's internals.
 */
import type { SessionEvent, SessionHeader, SessionStore } from '../index.js';

export interface StoreObserver {
  created(header: SessionHeader): void;
  appended(id: string, events: SessionEvent[]): void;
}

type ClosableStore = SessionStore & { close?: () => Promise<void> };

export function observedSessions(inner: ClosableStore, observer: StoreObserver): SessionStore & { close(): Promise<void> } {
  return {
    async create(header) {
      await inner.create(header);
      observer.created(header);
    },
    async append(id, events) {
      // Copy the batch: the runtime may reuse its array after the call resolves.
      const batch = [...events];
      await inner.append(id, events);
      observer.appended(id, batch);
    },
    flush: (id) => inner.flush(id),
    read: (id) => inner.read(id),
    list: () => inner.list(),
    // brood.close() closes its store when the store can be closed; keep that for the file store.
    close: async () => {
      await inner.close?.();
    },
  };
}
