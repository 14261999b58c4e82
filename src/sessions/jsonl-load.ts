/**
 * Loading JSONL session files (SPEC §6): header line, then one event per line.
 *
 * Crash model: the writer emits whole lines ending in '\n', so a crash can only leave a torn tail.
 * - The last line is torn when it lacks its '\n' (the record was never committed, even if the bytes
 *   happen to parse) or does not parse at all (e.g. zero-filled blocks after a crash). It is dropped
 *   and the file truncated to the end of the last good line, so later appends start on a clean line.
 * - If the torn line is the header, the session never existed: callers treat it as unknown.
 * - Anything else — a bad line with more lines after it, a complete line that parses but fails the
 *   schema, a seq gap — cannot be a torn write, so it is SESSION_CORRUPT naming file and 1-based line.
 */

import type { BigIntStats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open, truncate } from 'node:fs/promises';
import { BroodError } from '../errors.js';
import type { SessionEvent, SessionHeader } from '../types.js';
import type { SessionFileCache } from './jsonl-cache.js';
import { checkHeader, eventProblem } from './validate.js';

export type Warn = (message: string) => void;

export type ParsedFile =
  | { kind: 'never-existed'; reason: string }
  | {
      kind: 'ok';
      header: SessionHeader;
      events: SessionEvent[];
      goodLength: number;
      torn?: { line: number; reason: string };
    };

const NEWLINE = 0x0a;
const HEADER_CHUNK = 4096;
const HEADER_LIMIT = 1 << 20;

/** Pure parse of a whole file's bytes; `id` is the id the file name promises. */
export function parseSessionFile(bytes: Uint8Array, file: string, id: string): ParsedFile {
  const events: SessionEvent[] = [];
  let header: SessionHeader | undefined;
  let start = 0;
  for (let index = 0; start < bytes.length; index++) {
    const newline = bytes.indexOf(NEWLINE, start);
    const terminated = newline !== -1;
    const end = terminated ? newline : bytes.length;
    const isLast = !terminated || end + 1 === bytes.length;
    const value = terminated ? parseJson(bytes.subarray(start, end)) : undefined;
    if (value === undefined && !isLast) throw corrupt(file, index + 1, 'line is not valid JSON');
    if (value === undefined) {
      const reason = terminated ? 'last line is not valid JSON' : 'last line has no terminating newline';
      if (header === undefined) return { kind: 'never-existed', reason: `header ${reason}` };
      return { kind: 'ok', header, events, goodLength: start, torn: { line: index + 1, reason } };
    }
    if (header === undefined) header = headerFrom(value.parsed, file, id);
    else events.push(eventFrom(value.parsed, file, index + 1, events.length));
    start = end + 1;
  }
  if (header === undefined) return { kind: 'never-existed', reason: 'file is empty' };
  return { kind: 'ok', header, events, goodLength: bytes.length };
}

/** A loaded session; `torn` when a torn last line was dropped (and, with `repair`, cut off the file). */
export interface LoadedSession {
  header: SessionHeader;
  events: SessionEvent[];
  torn: boolean;
}

/**
 * Reads a session file. Missing or never-existed → NOT_RESUMABLE. A torn tail is dropped from the
 * result; only with `repair` (the session's writer, holding its lock, about to append) is the file
 * also truncated to the last good line. A reader must never repair: the "torn" line may be one the
 * writer is still writing, and cutting it off would leave a gap in seq. With a `cache`, an unchanged
 * file is not read again (jsonl-cache.ts), and a read that ended on a complete line is remembered.
 */
export async function loadSessionFile(
  file: string,
  id: string,
  warn: Warn,
  mode: { repair: boolean; cache?: SessionFileCache },
): Promise<LoadedSession> {
  const remembered = await mode.cache?.lookup(file, 'whole');
  if (remembered?.whole !== undefined) {
    if (remembered.checked) return { ...parseChecked(remembered.whole), torn: false };
    const parsed = parseSessionFile(remembered.whole, file, id);
    if (parsed.kind === 'ok' && parsed.torn === undefined) {
      remembered.checked = true;
      return { header: parsed.header, events: parsed.events, torn: false };
    }
  }
  let read: { bytes: Buffer; stat: BigIntStats };
  try {
    read = await readWhole(file);
  } catch (error) {
    if (isNotFound(error)) throw unknownSession(id, file);
    throw notAFile(error, file) ?? error;
  }
  const parsed = parseSessionFile(read.bytes, file, id);
  if (parsed.kind === 'never-existed') {
    if (mode.repair) warn(`${file}: ${parsed.reason}; treating session ${id} as never created`);
    throw unknownSession(id, file);
  }
  if (parsed.torn !== undefined && mode.repair) {
    await truncate(file, parsed.goodLength);
    warn(
      `${file}: dropped torn line ${parsed.torn.line} (${parsed.torn.reason}); truncated to ${parsed.goodLength} bytes`,
    );
  }
  if (parsed.torn === undefined && BigInt(read.bytes.length) === read.stat.size)
    mode.cache?.remember(file, { stat: read.stat, header: headerBytes(read.bytes), whole: read.bytes, checked: true });
  return { header: parsed.header, events: parsed.events, torn: parsed.torn !== undefined };
}

/** The file's bytes and its stat from the same open file: the bytes are at most `stat.size` long. */
async function readWhole(file: string): Promise<{ bytes: Buffer; stat: BigIntStats }> {
  const handle = await open(file, 'r');
  try {
    const stat = await handle.stat({ bigint: true });
    // Its own allocation, not a slice of a shared slab: the cache may keep it (jsonl-cache.ts).
    const bytes = Buffer.allocUnsafeSlow(Number(stat.size));
    let filled = 0;
    while (filled < bytes.length) {
      const { bytesRead } = await handle.read(bytes, filled, bytes.length - filled, filled);
      if (bytesRead === 0) break; // truncated since the stat
      filled += bytesRead;
    }
    return { bytes: bytes.subarray(0, filled), stat };
  } finally {
    await handle.close();
  }
}

/**
 * Bytes that passed parseSessionFile whole, unchanged since (the cache vouches for that): the same
 * checks would pass again, so each line is only parsed. JSON never holds a raw newline.
 */
function parseChecked(bytes: Buffer): { header: SessionHeader; events: SessionEvent[] } {
  const lines = bytes.toString('utf8').split('\n');
  lines.pop(); // after the last newline: nothing
  const [header, ...events] = lines.map((line) => JSON.parse(line) as unknown);
  return { header: header as SessionHeader, events: events as SessionEvent[] };
}

function headerBytes(bytes: Buffer): Buffer {
  const newline = bytes.indexOf(NEWLINE);
  return bytes.subarray(0, newline === -1 ? bytes.length : newline);
}

export type HeaderLine =
  | { kind: 'never-existed'; reason: string }
  | { kind: 'ok'; header: SessionHeader; birthtimeNs: bigint };

/**
 * Reads only the first line (list() must stay cheap with thousands of long sessions); with a `cache`,
 * not even that when the file is unchanged since it was read.
 */
export async function readHeaderLine(file: string, id: string, cache?: SessionFileCache): Promise<HeaderLine> {
  const remembered = await cache?.lookup(file, 'header');
  if (remembered !== undefined) {
    // A remembered header line passed the header check when it was read, and is unchanged since.
    const header = JSON.parse(remembered.header.toString('utf8')) as SessionHeader;
    return { kind: 'ok', header, birthtimeNs: remembered.stat.birthtimeNs };
  }
  const handle = await open(file, 'r');
  try {
    const stat = await handle.stat({ bigint: true });
    const size = Number(stat.size);
    const { line, head } = await readFirstLine(handle, Math.min(size, HEADER_LIMIT));
    if (line === undefined) {
      if (size > HEADER_LIMIT) throw corrupt(file, 1, `header line longer than ${HEADER_LIMIT} bytes`);
      return { kind: 'never-existed', reason: size === 0 ? 'file is empty' : 'header line has no terminating newline' };
    }
    const value = parseJson(line);
    if (value === undefined) {
      // An unparseable header is only a torn write when nothing follows it.
      if (line.length + 1 === size) return { kind: 'never-existed', reason: 'header line is not valid JSON' };
      throw corrupt(file, 1, 'line is not valid JSON');
    }
    const header = headerFrom(value.parsed, file, id);
    // A small session came in whole with its first line: a read of it that follows costs a stat.
    if (head.length === size) cache?.remember(file, { stat, header: line, whole: head });
    else cache?.remember(file, { stat, header: ownCopy(line) });
    return { kind: 'ok', header, birthtimeNs: stat.birthtimeNs };
  } finally {
    await handle.close();
  }
}

/** A copy in an allocation of its own size (a view would keep its whole chunk alive). */
function ownCopy(bytes: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

/** The first line (undefined when there is no newline within `limit`), and the first chunk read. */
async function readFirstLine(handle: FileHandle, limit: number): Promise<{ line?: Buffer; head: Buffer }> {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total < limit) {
    const chunk = Buffer.alloc(Math.min(HEADER_CHUNK, limit - total));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, total);
    if (bytesRead === 0) break;
    const read = chunk.subarray(0, bytesRead);
    chunks.push(read);
    total += bytesRead;
    const newline = read.indexOf(NEWLINE);
    if (newline !== -1) {
      const line =
        chunks.length === 1
          ? read.subarray(0, newline)
          : Buffer.concat(chunks).subarray(0, total - bytesRead + newline);
      return { line, head: chunks[0] as Buffer };
    }
  }
  return { head: chunks[0] ?? Buffer.alloc(0) };
}

function headerFrom(value: unknown, file: string, id: string): SessionHeader {
  let header: SessionHeader;
  try {
    header = checkHeader(value);
  } catch (error) {
    if (error instanceof BroodError && error.code === 'INVALID_DEPTH') {
      throw new BroodError('INVALID_DEPTH', `${file}:1: ${error.message}`, {
        details: { ...error.details, file, line: 1 },
        cause: error,
      });
    }
    throw corrupt(file, 1, error instanceof Error ? error.message : String(error));
  }
  if (header.id !== id) throw corrupt(file, 1, `header id ${JSON.stringify(header.id)} does not match file name`);
  return header;
}

function eventFrom(value: unknown, file: string, line: number, expectedSeq: number): SessionEvent {
  const problem = eventProblem(value);
  if (problem !== undefined) throw corrupt(file, line, `invalid event: ${problem}`);
  const event = value as SessionEvent;
  if (event.seq !== expectedSeq) throw corrupt(file, line, `expected seq ${expectedSeq}, got ${event.seq}`);
  return event;
}

/** `undefined` means "not JSON"; a wrapper keeps a literal JSON `null` distinguishable from that. */
function parseJson(bytes: Uint8Array): { parsed: unknown } | undefined {
  try {
    return { parsed: JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) };
  } catch {
    return undefined;
  }
}

export function corrupt(file: string, line: number, reason: string): BroodError {
  return new BroodError('SESSION_CORRUPT', `${file}:${line}: ${reason}`, { details: { file, line } });
}

export function unknownSession(id: string, file: string): BroodError {
  return new BroodError('NOT_RESUMABLE', `unknown session ${id}`, { details: { id, file } });
}

/** A session path that is not a regular file (a directory named `<id>.jsonl`) is a clear error, not a raw EISDIR. */
export function notAFile(error: unknown, file: string): BroodError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'EISDIR') return undefined;
  return new BroodError('SESSION_CORRUPT', `${file}: is a directory, not a session file`, {
    details: { file },
    cause: error,
  });
}

export function isNotFound(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ENOENT';
}
