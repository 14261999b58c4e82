/**
 * Reads a fileSessions directory back for `inspect` and `trace`: every header and event, through the
 * library's own loader (so torn tails are repaired and corruption is reported the same way).
 */
import { stat } from 'node:fs/promises';
import { fileSessions, type SessionEvent, type SessionHeader } from '../index.js';
import { UsageError } from './cli-errors.js';
import { TreeState } from './tree-state.js';

export interface LoadedSessions {
  headers: SessionHeader[];
  events: Map<string, SessionEvent[]>;
  tree: TreeState;
}

export async function loadSessionDir(command: string, dir: string): Promise<LoadedSessions> {
  const info = await stat(dir).catch(() => undefined);
  if (info === undefined || !info.isDirectory()) throw new UsageError(`brood ${command}: ${dir} is not a directory`);
  const store = fileSessions(dir);
  try {
    const headers = await store.list();
    if (headers.length === 0) throw new UsageError(`brood ${command}: no sessions in ${dir}`);
    const events = new Map<string, SessionEvent[]>();
    const tree = new TreeState();
    for (const header of headers) {
      const session = await store.read(header.id);
      // A fork child starts with its parent's completed turns; those are the parent's, not its own.
      const own = session.events.slice(header.seedLength ?? 0);
      events.set(header.id, own);
      tree.addHeader(header);
      tree.addEvents(header.id, own);
    }
    return { headers, events, tree };
  } finally {
    await store.close();
  }
}
