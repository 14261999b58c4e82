/**
 * In-process SessionStore (the runtime default, SPEC §3/§6). Everything is copied in and out (plain
 * data by hand, anything else with structuredClone) so neither the writer nor a reader can mutate what
 * the store holds — the same isolation a file store gets for free through serialization.
 */
import { z } from 'zod';
import { DEFAULTS } from '../defaults.js';
import { BroodError } from '../errors.js';
import type { SessionEvent, SessionHeader, SessionStore } from '../types.js';
import { isPlainObject } from '../util/plain.js';
import { parseConfig } from '../util/untrusted.js';
import { type RetainPolicy, Retention, type TreeRecord } from './retention.js';
import { checkEventShapes, checkHeader, checkSeqs } from './validate.js';

export interface MemorySessionOptions {
  /**
   * What the store keeps once every agent of a tree is disposed: `'recent'` (default) the most recent
   * finished trees up to `retainBytes`, `'all'` everything, `'none'` nothing. Live trees are always kept.
   */
  retain?: RetainPolicy;
  /** The byte budget of `'recent'` (estimated from the events' contents). */
  retainBytes?: number;
}

const optionsSchema = z.strictObject({
  retain: z.enum(['recent', 'all', 'none']).optional(),
  retainBytes: z.number().int().nonnegative().optional(),
});

interface Entry {
  header: SessionHeader;
  events: SessionEvent[];
  tree: TreeRecord;
  /** Agents holding the session (acquire without release). */
  holds: number;
}

export function memorySessions(options: MemorySessionOptions = {}): SessionStore {
  const store = new MemorySessionStore(parseConfig(optionsSchema, options ?? {}, 'memorySessions options'));
  // Own properties, not prototype methods: a host that wraps the store with `{ ...inner, append }` keeps them all.
  return {
    create: (header) => store.create(header),
    append: (id, events) => store.append(id, events),
    flush: (id) => store.flush(id),
    read: (id) => store.read(id),
    list: () => store.list(),
    acquire: (id) => store.acquire(id),
    release: (id) => store.release(id),
  };
}

/** Work happens synchronously inside each async method, so concurrent calls apply in call order. */
class MemorySessionStore implements SessionStore {
  // Map iteration order is insertion order, which is exactly "creation order" for list().
  private readonly sessions = new Map<string, Entry>();
  private readonly retention: Retention;

  constructor(options: MemorySessionOptions) {
    this.retention = new Retention(
      options.retain ?? DEFAULTS.memorySessions.retain,
      options.retainBytes ?? DEFAULTS.memorySessions.retainBytes,
      (tree) => {
        for (const id of tree.sessions) this.sessions.delete(id);
      },
    );
  }

  async create(header: SessionHeader): Promise<void> {
    const checked = checkHeader(header);
    if (this.sessions.has(checked.id)) {
      throw new BroodError('INVALID_CONFIG', `session ${checked.id} already exists`, { details: { id: checked.id } });
    }
    // The same copy as events: a session is created per child, and structuredClone of a small header
    // was ~14 µs of the parent's time per child in a fan-out.
    copied = 0;
    const copy = copyData(checked);
    const parent = checked.parentSession === undefined ? undefined : this.sessions.get(checked.parentSession);
    const tree = parent?.tree ?? { root: checked.id, sessions: [], live: 0, bytes: 0 };
    tree.sessions.push(checked.id);
    this.sessions.set(checked.id, { header: copy, events: [], tree, holds: 0 });
    this.grow(tree, copied);
  }

  async append(id: string, events: SessionEvent[]): Promise<void> {
    const entry = this.entryOf(id, 'append');
    const batch = checkEventShapes(id, events);
    checkSeqs(id, batch, entry.events.length);
    copied = 0;
    for (const event of batch) entry.events.push(copyData(event));
    this.grow(entry.tree, copied);
  }

  async flush(id: string): Promise<void> {
    this.entryOf(id, 'flush');
  }

  async read(id: string): Promise<{ header: SessionHeader; events: SessionEvent[] }> {
    const entry = this.entryOf(id, 'read');
    return structuredClone({ header: entry.header, events: entry.events });
  }

  async list(): Promise<SessionHeader[]> {
    return [...this.sessions.values()].map((entry) => structuredClone(entry.header));
  }

  /** One process, so never SESSION_LOCKED: holds only tell the store which trees are live. */
  async acquire(id: string): Promise<void> {
    const entry = this.entryOf(id, 'acquire');
    if (entry.holds++ > 0) return;
    if (entry.tree.live++ === 0) this.retention.treeRevived(entry.tree);
  }

  async release(id: string): Promise<void> {
    const entry = this.sessions.get(id);
    if (entry === undefined || entry.holds === 0) return;
    if (--entry.holds > 0) return;
    if (--entry.tree.live === 0) this.retention.treeFinished(entry.tree);
  }

  private entryOf(id: string, op: string): Entry {
    const entry = this.sessions.get(id);
    if (entry === undefined) throw notResumable(id, op);
    return entry;
  }

  private grow(tree: TreeRecord, bytes: number): void {
    tree.bytes += bytes;
    if (tree.live === 0) this.retention.grew(tree, bytes);
  }
}

/**
 * Estimated heap bytes of what the last copyData calls copied: V8's sizes on a 64-bit build, roughly
 * (a string's header and characters, a slot per value, an object's header and one slot per key).
 */
let copied = 0;

/**
 * Deep copy for session data. Events are plain JSON-like data and appends are the hot path (every
 * driver event), so plain objects and arrays are copied by hand — several times faster than
 * structuredClone for small objects; anything else (a Date, a Map) still goes through structuredClone.
 */
function copyData<T>(value: T): T {
  copied += typeof value === 'string' ? 16 + value.length + 8 : 8;
  if (typeof value !== 'object' || value === null) return value;
  copied += 16;
  if (Array.isArray(value)) return value.map(copyData) as T;
  if (!isPlainObject(value)) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  const source = value as Record<string, unknown>;
  // for-in over own keys, not Object.keys: no array per copied object (appends are the hot path).
  for (const key in source) {
    if (!Object.hasOwn(source, key)) continue;
    copied += 8;
    copy[key] = copyData(source[key]);
  }
  return copy as T;
}

export function notResumable(id: string, op: string): BroodError {
  return new BroodError('NOT_RESUMABLE', `${op}: unknown session ${id}`, { details: { id } });
}
