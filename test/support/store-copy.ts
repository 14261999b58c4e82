/**
 * A session store as a host killed now would leave it: a copy of every session, each log optionally
 * shortened by `cut` (a kill before some write). The copy is a memory store; the original goes on.
 */
import type { SessionEvent, SessionStore } from '../../src/index.js';
import { memorySessions } from '../../src/index.js';

export async function copyOf(
  from: SessionStore,
  cut: (id: string, events: SessionEvent[]) => SessionEvent[] = (_, events) => events,
): Promise<SessionStore> {
  const to = memorySessions();
  for (const header of await from.list()) {
    await to.create(header);
    await to.append(header.id, cut(header.id, (await from.read(header.id)).events));
  }
  return to;
}
