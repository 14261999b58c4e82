/**
 * One writer per session file: an exclusive, crash-safe ownership lock next to it, `<id>.jsonl.lock`.
 * Portable and dependency-free:
 * - Taking it is atomic and never shows a half-written lock: the holder's record is written to a
 *   private record file first and then hard-linked to the lock name, which fails if the name exists
 *   (one record file serves a store's burst of locks: lock-records.ts).
 * - The record names the holder: pid, the process's start time and a random token.
 * - A lock whose holder is dead (no such pid, or the pid was reused by a process that started later)
 *   is stale and is broken safely: under a short-lived `.break` lock the stale record is re-read and
 *   removed only if it is still the same record, so two processes breaking it at once cannot remove a
 *   lock that a third one has just taken.
 * - Release removes the lock only while it still carries our token.
 */
import { link, lstat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { BroodError } from '../errors.js';
import {
  codeOf,
  type FileIdentity,
  hostName,
  type LockRecord,
  type LockRecords,
  ownStartTime,
  processStartTime,
  type RecordFile,
  readRecord,
  removeDeadRecord,
  sameFile,
} from './lock-records.js';

export interface SessionLock {
  readonly file: string;
  release(): Promise<void>;
}

/** A recycled pid belongs to a process that started after the holder; start times within this are the same process. */
const START_TOLERANCE_MS = 2_000;
/** A `.break` lock older than this was left by a process that died mid-break (it is held for microseconds). */
const BREAK_LOCK_STALE_MS = 10_000;

/** Takes the lock with one of `records`' record files (lock-records.ts). */
export function acquireSessionLock(records: LockRecords, lockFile: string, sessionFile: string): Promise<SessionLock> {
  return records.with((record) => acquireWith(record, lockFile, sessionFile));
}

async function acquireWith(record: RecordFile, lockFile: string, sessionFile: string): Promise<SessionLock> {
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await tryLink(record.path, lockFile)) return heldLock(lockFile, record.record.token, record.identity);
    const holder = await readRecord(lockFile);
    if (holder === 'missing') continue; // released between our attempt and the read
    if (holder !== 'unreadable' && isAlive(holder)) throw lockedError(sessionFile, lockFile, holder);
    if (holder === 'unreadable') throw lockedError(sessionFile, lockFile, undefined);
    await breakStale(record, lockFile, holder);
  }
  throw lockedError(sessionFile, lockFile, undefined);
}

/**
 * Release removes the lock only while it is still ours: the same file as our record file (one stat),
 * or, when that cannot tell, a record carrying our token.
 */
function heldLock(file: string, token: string, identity: FileIdentity | undefined): SessionLock {
  let released: Promise<void> | undefined;
  return {
    file,
    release() {
      released ??= (async () => {
        if (identity !== undefined) {
          const now = await lstat(file, { bigint: true }).catch(() => undefined);
          if (now === undefined) return;
          if (sameFile(identity, now)) {
            await unlink(file).catch(() => undefined);
            return;
          }
        }
        const current = await readRecord(file);
        if (typeof current === 'object' && current.token === token) await unlink(file).catch(() => undefined);
      })();
      return released;
    },
  };
}

/** Exclusive create with complete content: the record file is linked to the lock name, which fails if the name exists. */
async function tryLink(recordFile: string, lockFile: string): Promise<boolean> {
  try {
    await link(recordFile, lockFile);
    return true;
  } catch (error) {
    if (codeOf(error) === 'EEXIST') return false;
    throw error;
  }
}

/** Alive = same host and a process with that pid exists that started when the holder did. */
function isAlive(holder: LockRecord): boolean {
  // Another host's process cannot be checked from here (a shared network directory): assume it lives.
  if (holder.host !== hostName()) return true;
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

async function breakStale(record: RecordFile, lockFile: string, stale: LockRecord): Promise<void> {
  const breakFile = `${lockFile}.break`;
  if (!(await tryLink(record.path, breakFile))) {
    await clearAbandonedBreakLock(breakFile);
    return; // someone else is breaking it; the caller re-reads and retries
  }
  try {
    const current = await readRecord(lockFile);
    if (typeof current === 'object' && current.token === stale.token) await unlink(lockFile).catch(() => undefined);
  } finally {
    await unlink(breakFile).catch(() => undefined);
  }
  await removeDeadRecord(dirname(lockFile), stale.token);
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
