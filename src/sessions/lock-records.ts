/**
 * The lock records a store links to lock names (lock.ts). A lock must never be seen half-written, so a
 * lock is taken by hard-linking a complete record file to the lock's name. Writing a fresh record file
 * per lock cost five file operations per lock (open, write, close, link, unlink); a recovery takes a
 * thousand locks at once. So one record file serves every lock a store takes while a burst lasts: it is
 * written once, linked to each lock name, and removed as soon as no lock is being taken with it. It is
 * also replaced once it is a second old (its time stays a true "taken at" to the second, which is what
 * tells a live breaker from an abandoned one) or has served many links (file systems cap an inode's links).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { open, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

export interface LockRecord {
  pid: number;
  /** When the holding process started (ms since the epoch), to tell a live holder from a reused pid. */
  started: number;
  host: string;
  token: string;
  /** When the lock was taken (for the message only). */
  at: number;
}

/** A record file: the bytes every lock linked to it holds. */
export interface RecordFile {
  readonly path: string;
  readonly record: LockRecord;
  /** The record file's inode (set once written): every lock linked to it is this same file. */
  identity?: FileIdentity;
}

/** Which file a name is: device, inode and birth time (an inode number alone may be reused). */
export interface FileIdentity {
  dev: bigint;
  ino: bigint;
  birthtimeNs: bigint;
}

export function sameFile(a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.birthtimeNs === b.birthtimeNs;
}

const MAX_AGE_MS = 1_000;
const MAX_LINKS = 1_000;
/** Lock records are a few hundred bytes; anything longer was not written by this code. */
const RECORD_LIMIT = 4096;

interface Current extends RecordFile {
  written: Promise<void>;
  users: number;
  links: number;
}

export class LockRecords {
  #current: Current | undefined;
  readonly #removing = new Set<Promise<void>>();

  constructor(private readonly dir: string) {}

  /** Runs `take` with a record file that exists until `take` settles. */
  async with<T>(take: (file: RecordFile) => Promise<T>): Promise<T> {
    const file = this.#fresh();
    file.users += 1;
    file.links += 1;
    try {
      await file.written;
      return await take(file);
    } finally {
      file.users -= 1;
      if (file.users === 0) this.#retire(file);
    }
  }

  /** Settles once every record file this store wrote is removed. */
  async idle(): Promise<void> {
    await Promise.all(this.#removing);
  }

  #fresh(): Current {
    const current = this.#current;
    if (current !== undefined && Date.now() - current.record.at < MAX_AGE_MS && current.links < MAX_LINKS)
      return current;
    if (current !== undefined) this.#current = undefined; // removed once its last user is done
    const record = newRecord();
    const path = recordPath(this.dir, record.token);
    const file: Current = { path, record, written: Promise.resolve(), users: 0, links: 0 };
    file.written = writeFile(path, JSON.stringify(record), { flag: 'wx', mode: 0o644 })
      .then(() => stat(path, { bigint: true }))
      .then(({ dev, ino, birthtimeNs }) => {
        file.identity = { dev, ino, birthtimeNs };
      });
    file.written.catch(() => undefined); // its users see the failure
    this.#current = file;
    return file;
  }

  #retire(file: Current): void {
    if (this.#current === file) this.#current = undefined;
    const removing = file.written.then(() => unlink(file.path)).catch(() => undefined);
    this.#removing.add(removing);
    void removing.then(() => this.#removing.delete(removing));
  }
}

function recordPath(dir: string, token: string): string {
  return join(dir, `.lock-record.${token}.tmp`);
}

/** Tokens whose record files this process has already removed. */
const removedRecords = new Set<string>();

/**
 * A holder that died in a burst of locks left its record file behind: removed (once per holder) by
 * whoever breaks one of its locks. Only a dead holder's: a live one's is in use.
 */
export async function removeDeadRecord(dir: string, token: string): Promise<void> {
  if (removedRecords.has(token) || !/^[0-9a-f]{24}$/.test(token)) return;
  removedRecords.add(token);
  await unlink(recordPath(dir, token)).catch(() => undefined);
}

export function newRecord(): LockRecord {
  return {
    pid: process.pid,
    started: ownStartTime(),
    host: hostName(),
    token: randomBytes(12).toString('hex'),
    at: Date.now(),
  };
}

/** A lock file's record; 'unreadable' when it is not one this code wrote. One open, one read, one close. */
export async function readRecord(file: string): Promise<LockRecord | 'missing' | 'unreadable'> {
  let text: string;
  try {
    const handle = await open(file, 'r');
    try {
      const buffer = Buffer.allocUnsafe(RECORD_LIMIT);
      const { bytesRead } = await handle.read(buffer, 0, RECORD_LIMIT, 0);
      if (bytesRead === RECORD_LIMIT) return 'unreadable';
      text = buffer.toString('utf8', 0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return 'missing';
    throw error;
  }
  try {
    const value = JSON.parse(text) as Partial<LockRecord>;
    if (typeof value.pid === 'number' && typeof value.started === 'number' && typeof value.token === 'string')
      return value as LockRecord;
  } catch {
    // fall through: not a lock this code wrote
  }
  return 'unreadable';
}

let host: string | undefined;
/** This machine's name, read once: every lock this process takes names it. */
export function hostName(): string {
  host ??= hostname();
  return host;
}

let processStarted: number | undefined;
/** This process's start time, measured the way a later process will measure it (read on first use, not at import). */
export function ownStartTime(): number {
  processStarted ??= processStartTime(process.pid) ?? Math.round(Date.now() - process.uptime() * 1000);
  return processStarted;
}

/**
 * Start time of a process from /proc (Linux): boot time + the start tick in /proc/<pid>/stat. Where
 * /proc is missing the answer is undefined and a live pid counts as the holder (never broken wrongly).
 */
export function processStartTime(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (comm) may contain spaces and parentheses: count fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const startTicks = Number(fields[19]);
    const bootLine = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'));
    if (!Number.isFinite(startTicks) || bootLine === null) return undefined;
    return Math.round((Number(bootLine[1]) + startTicks / CLOCK_TICKS) * 1000);
  } catch {
    return undefined;
  }
}

/** USER_HZ: 100 on every mainstream Linux build (it is part of the kernel ABI for /proc). */
const CLOCK_TICKS = 100;

export function codeOf(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}
