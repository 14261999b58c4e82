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
  return parseConfig(runOptions, opts, 'run options', 'INVALID_ARGS');
}
