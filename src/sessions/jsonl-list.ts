/**
 * list() of a session directory: each session's header line read with bounded concurrency, then
 * sorted into creation order.
 */
import type { SessionHeader } from '../types.js';

const LIST_CONCURRENCY = 16;

/** One listed session: its header and what ranks it among sessions created in the same millisecond. */
export interface ListRow {
  id: string;
  header: SessionHeader;
  order: number;
  birth: bigint;
}

/**
 * Creation order, compared as the tuple (createdAt, order, birth, id):
 * - `createdAt`: the runtime's own clock, and what survives copying the directory elsewhere.
 * - ties (common: it has millisecond resolution) go to the call order of this instance's create()s,
 *   which is exact; sessions from earlier processes rank after those (Infinity), rarely mattering
 *   since their createdAt would have to hit the same millisecond.
 * - then file birth time (filesystem clock ticks are coarse, so ties remain; mtime is no creation
 *   signal because every append moves it; 0 where the filesystem does not record it),
 * - then id, which makes the order total and therefore stable across calls.
 */
function byCreation(a: ListRow, b: ListRow): number {
  if (a.header.createdAt !== b.header.createdAt) return a.header.createdAt - b.header.createdAt;
  if (a.order !== b.order) return a.order < b.order ? -1 : 1;
  if (a.birth !== b.birth) return a.birth < b.birth ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The headers of `ids` in creation order; a session whose row is undefined is left out. */
export async function inCreationOrder(
  ids: readonly string[],
  rowOf: (id: string) => Promise<ListRow | undefined>,
): Promise<SessionHeader[]> {
  const rows = await mapLimit(ids, LIST_CONCURRENCY, rowOf);
  return rows
    .filter((row) => row !== undefined)
    .sort(byCreation)
    .map((row) => row.header);
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
