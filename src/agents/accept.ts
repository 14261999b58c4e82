/**
 * Accepting a message, whatever its source (a host's run or send, a parent's prompt, a job's notice, a
 * child's report): its `user/message` record is appended first — its parts' base64 once, its run
 * options (budget, output schema) so a crash resume keeps them, never its per-request context — and it
 * is queued with a `durable` promise that resolves once the record is flushed. Only then may a turn
 * claim it (the inbox waits on `durable`), so no turn ever answers a message the log does not hold.
 */
import { BroodError } from '../errors.js';
import { type CheckedInput, partsField } from '../models/content-parts.js';
import type { Budget } from '../scheduler/types.js';
import type { MessageDelivery } from '../sessions/event-types.js';
import type { SessionWriter } from '../sessions/session-writer.js';
import type { Inbox } from './inbox.js';
import { recordedRunOptions, type StructuredTurn } from './structured-turn.js';

export interface IncomingMessage {
  message: string | CheckedInput;
  source: string;
  signal?: AbortSignal | undefined;
  structured?: StructuredTurn | undefined;
  report?: { delivery: MessageDelivery; from?: string } | undefined;
  context?: unknown;
  budget?: Budget | undefined;
  /** A continuable child's settlement notice: which busy period it settles (so recovery can tell it was written). */
  settles?: { childId: string; turn: number } | undefined;
}

/** Writes the message's record and queues it; resolves (`durable`) once the record is flushed. */
export function recordAndQueue(
  writer: SessionWriter,
  inbox: Inbox,
  id: string,
  incoming: IncomingMessage,
): Promise<void> {
  const { message, source, signal, structured, report, context, budget, settles } = incoming;
  const { text, parts } = typeof message === 'string' ? { text: message, parts: undefined } : message;
  if (typeof text !== 'string') return Promise.reject(new BroodError('INVALID_ARGS', 'a message must be a string'));
  // The parts' base64 is written once, here; the inbox, the history and the driver share these strings.
  const options = recordedRunOptions(budget, structured);
  const durable = writer
    .append([
      {
        type: 'user/message',
        data: { id, text, ...partsField(parts), source, ...report, ...options, ...(settles && { settles }) },
      },
    ])
    .then(() => writer.flush());
  const delivery = report?.delivery;
  inbox.push({
    id,
    text,
    ...partsField(parts),
    durable,
    signal,
    ...(structured === undefined ? {} : { structured }),
    ...(delivery === undefined ? {} : { delivery }),
    ...(context === undefined ? {} : { context }),
  });
  return durable;
}
