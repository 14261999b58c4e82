/**
 * One writer per session file: an exclusive, crash-safe ownership lock next to it, `<id>.jsonl.lock`.
 * Portable and dependency-free:
 * - Taking it is atomic and never shows a half-written lock: the holder's record is written to a
 *   private temporary file first and then hard-linked to the lock name, which fails if the name exists.
 * - The record names the holder: pid, the process's start time and a random token.
 * - A lock whose holder is dead (no such pid, or the pid was reused by a process that started later)
 *   is stale and is broken safely: under a short-lived `.break` lock the stale record is re-read and
 *   removed only if it is still the same record, so two processes breaking it at once cannot remove a
 *   lock that a third one has just taken.
 * - Release removes the lock only while it still carries our token.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { BroodError } from '../errors.js';

interface LockRecord {
  pid: number;
  /** When the holding process started (ms since the epoch), to tell a live holder from a reused pid. */
  started: number;
  host: string;
  token: string;
  /** When the lock was taken (for the message only). */
  at: number;
}

export interface SessionLock {
  readonly file: string;
  release(): Promise<void>;
}

/** A recycled pid belongs to a process that started after the holder; start times within this are the same process. */
const START_TOLERANCE_MS = 2_000;
/** A `.break` lock older than this was left by a process that died mid-break (it is held for microseconds). */
const BREAK_LOCK_STALE_MS = 10_000;

let processStarted: number | undefined;
/** This process's start time, measured the way a later process will measure it (read on first use, not at import). */
function ownStartTime(): number {
  processStarted ??= processStartTime(process.pid) ?? Math.round(Date.now() - process.uptime() * 1000);
  return processStarted;
}

export async function acquireSessionLock(lockFile: string, sessionFile: string): Promise<SessionLock> {
  const record: LockRecord = {
    pid: process.pid,
    started: ownStartTime(),
    host: hostname(),
    token: randomBytes(12).toString('hex'),
    at: Date.now(),
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await tryCreate(lockFile, record)) return heldLock(lockFile, record.token);
    const holder = await readRecord(lockFile);
    if (holder === 'missing') continue; // released between our attempt and the read
    if (holder !== 'unreadable' && isAlive(holder)) throw lockedError(sessionFile, lockFile, holder);
    if (holder === 'unreadable') throw lockedError(sessionFile, lockFile, undefined);
    await breakStale(lockFile, holder);
  }
  throw lockedError(sessionFile, lockFile, undefined);
}

function heldLock(file: string, token: string): SessionLock {
  let released: Promise<void> | undefined;
  return {
    file,
    release() {
      released ??= (async () => {
        const current = await readRecord(file);
        if (typeof current === 'object' && current.token === token) await unlink(file).catch(() => undefined);
      })();
      return released;
    },
  };
}

/** Exclusive create with complete content: write a private file, hard-link it to the lock name. */
async function tryCreate(lockFile: string, record: LockRecord): Promise<boolean> {
  const temp = `${lockFile}.${record.token}.tmp`;
  await writeFile(temp, JSON.stringify(record), { flag: 'wx', mode: 0o644 });
  try {
    await link(temp, lockFile);
    return true;
  } catch (error) {
    if (codeOf(error) === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

async function readRecord(file: string): Promise<LockRecord | 'missing' | 'unreadable'> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
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

/** Alive = same host and a process with that pid exists that started when the holder did. */
function isAlive(holder: LockRecord): boolean {
  // Another host's process cannot be checked from here (a shared network directory): assume it lives.
  if (holder.host !== hostname()) return true;
  if (holder.pid === process.pid) return Math.abs(holder.started - ownStartTime()) <= START_TOLERANCE_MS;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if (codeOf(error) === 'ESRCH') return false;
    // EPERM: the process exists but belongs to someone else.
  }
  const started = processStartTime(holder.pid);
  return started === undefined || Math.abs(started - holder.started) <= START_TOLERANCE_MS;
}

async function breakStale(lockFile: string, stale: LockRecord): Promise<void> {
  const breakFile = `${lockFile}.break`;
  const breaker: LockRecord = {
    pid: process.pid,
    started: ownStartTime(),
    host: hostname(),
    token: randomBytes(12).toString('hex'),
    at: Date.now(),
  };
  if (!(await tryCreate(breakFile, breaker))) {
    await clearAbandonedBreakLock(breakFile);
    return; // someone else is breaking it; the caller re-reads and retries
  }
  try {
    const current = await readRecord(lockFile);
    if (typeof current === 'object' && current.token === stale.token) await unlink(lockFile).catch(() => undefined);
  } finally {
    await unlink(breakFile).catch(() => undefined);
  }
}

async function clearAbandonedBreakLock(breakFile: string): Promise<void> {
  const record = await readRecord(breakFile);
  if (record === 'missing') return;
  const abandoned = record === 'unreadable' ? false : !isAlive(record) || Date.now() - record.at > BREAK_LOCK_STALE_MS;
  if (abandoned) await unlink(breakFile).catch(() => undefined);
}

function lockedError(sessionFile: string, lockFile: string, holder: LockRecord | undefined): BroodError {
  const who =
    holder === undefined
      ? `an unreadable lock file ${lockFile} (remove it if no process writes this session)`
      : `process ${holder.pid} on ${holder.host}${holder.pid === process.pid ? ' (this process: another runtime or store instance)' : ''}, since ${new Date(holder.at).toISOString()}`;
  return new BroodError('SESSION_LOCKED', `session file ${sessionFile} is open for writing by ${who}`, {
    details: { file: sessionFile, lockFile, ...(holder === undefined ? {} : { pid: holder.pid, host: holder.host }) },
  });
}

/**
 * Start time of a process from /proc (Linux): boot time + the start tick in /proc/<pid>/stat. Where
 * /proc is missing the answer is undefined and a live pid counts as the holder (never broken wrongly).
 */
function processStartTime(pid: number): number | undefined {
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

function codeOf(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}
