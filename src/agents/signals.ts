/** Errors and the per-call options (`send(text, opts)`, `run(text, opts)`) of the agent's public calls. */
import { z } from 'zod';
import { BroodError } from '../errors.js';
import type { RunOptions, SendOptions } from '../types.js';
import { parseConfig } from '../util/untrusted.js';

export function disposedError(id: string): BroodError {
  return new BroodError('DISPOSED', `agent ${id} is disposed`);
}

export function abortedBefore(what: string): BroodError {
  return new BroodError('ABORTED', `aborted before ${what}`);
}

const signal = z.custom<AbortSignal>((value) => value instanceof AbortSignal, 'must be an AbortSignal');
const sendOptions = z.strictObject({ signal: signal.optional() });
const runOptions = sendOptions.extend({
  // Its schema is checked where its turn tool is built (structuredTurn), also INVALID_ARGS.
  outputSchema: z
    .custom<NonNullable<RunOptions['outputSchema']>>(
      (value) => typeof value === 'object' && value !== null,
      'must be a zod schema or a JSON Schema object',
    )
    .optional(),
  // Checked where it is used (parseBudget): a bad budget is INVALID_CONFIG, like every budget.
  budget: z.unknown().optional(),
  // Checked by checkContext: only whether it can be structured-cloned (it is never stored or shown).
  context: z.unknown().optional(),
});

/**
 * A call's options, checked at the call: anything but an options object (`run('x', 42)`), an unknown
 * key, a non-signal, or a getter that throws is INVALID_ARGS, never silently ignored. What the call
 * keeps is the parsed copy.
 */
export function parseSendOptions(opts: unknown): SendOptions {
  return parseConfig(sendOptions, opts, 'send options', 'INVALID_ARGS');
}

export function parseRunOptions(opts: unknown): Omit<RunOptions, 'budget'> & { budget?: unknown } {
  const parsed = parseConfig(runOptions, opts, 'run options', 'INVALID_ARGS');
  checkContext(parsed.context, 'run options');
  return parsed;
}

/**
 * A per-request context must be a structured-clone value (what can cross to a thread or process). The
 * message never quotes the value or the clone error (which may quote it): it may hold credentials.
 */
export function checkContext(context: unknown, where: string): void {
  if (context === undefined) return;
  try {
    structuredClone(context);
  } catch (error) {
    const name = error instanceof Error ? error.name : 'an error';
    throw new BroodError(
      'INVALID_ARGS',
      `${where}: context must be a structured-clone value (cloning it threw ${name})`,
    );
  }
}
