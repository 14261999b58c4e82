/**
 * The session file on disk, below the store's locking and queueing (jsonl.ts): creating one exclusively
 * (replacing a file whose header a crash tore), opening one for append, writing a whole buffer, and
 * fsyncing the directory so a new file's name survives a crash.
 */
import { constants, writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open, unlink } from 'node:fs/promises';
import { BroodError } from '../errors.js';
import { readHeaderLine, type Warn } from './jsonl-load.js';

// No O_CREAT when appending: appending to an unknown session must fail, not conjure an empty file.
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND;
const CREATE_FLAGS = APPEND_FLAGS | constants.O_CREAT | constants.O_EXCL;

/** Opens an existing session file for append (ENOENT when there is none). */
export function openAppendOnly(file: string): Promise<FileHandle> {
  return open(file, APPEND_FLAGS);
}

/**
 * Creates session `id`'s file holding `line` (its header), fsynced, and returns it open for append.
 * Leaves no half-written session behind: a failed create is a session that never existed.
 */
export async function createSessionFile(file: string, id: string, line: Buffer, warn: Warn): Promise<FileHandle> {
  const handle = await exclusiveCreate(file, id, warn);
  try {
    await writeAll(handle, line);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(file).catch(() => undefined);
    throw error;
  }
  return handle;
}

async function exclusiveCreate(file: string, id: string, warn: Warn): Promise<FileHandle> {
  try {
    return await open(file, CREATE_FLAGS, 0o644);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
  }
  // A file whose header was torn by a crash is a session that never existed; its id is free again.
  const existing = await readHeaderLine(file, id).catch(() => undefined);
  if (existing?.kind === 'never-existed') {
    warn(`${file}: ${existing.reason}; replacing it with a new session ${id}`);
    await unlink(file);
    try {
      return await open(file, CREATE_FLAGS, 0o644);
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
    }
  }
  throw new BroodError('INVALID_CONFIG', `session ${id} already exists`, { details: { id, file } });
}

/** One write call for the whole buffer; loops only if the OS reports a short write. */
export async function writeAll(handle: FileHandle, bytes: Buffer): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
    offset += bytesWritten;
  }
}

/**
 * Writes up to this size are made on the calling thread: a write into the page cache takes
 * microseconds (tens of them for a parent's answer with hundreds of calls), while the same write sent
 * to libuv's thread pool waits behind every operation queued there, fsyncs of other sessions included,
 * and a tool body waits for the write (write before effect). Larger writes go to the pool, so the
 * event loop is never held for long.
 */
const WRITE_HERE_LIMIT = 256 * 1024;

/** writeAll, on the calling thread when the buffer is small. */
export async function appendAll(handle: FileHandle, bytes: Buffer): Promise<void> {
  if (bytes.length > WRITE_HERE_LIMIT) return writeAll(handle, bytes);
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(handle.fd, bytes, offset, bytes.length - offset);
}

/** fsync the directory so a freshly created file's name survives a crash too (best effort off Linux). */
export async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Some platforms (Windows) cannot open or fsync a directory; the file itself is already synced.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
