/**
 * The driver side's check of what a sandbox thread sends (that thread runs model-written code, so
 * its messages are validated like any other worker's). A compiled check (src/declare.ts), built on
 * first use: it runs on every message, and a pool thread that never runs code never builds it.
 */
import { array, bool, int, literal, object, oneOf, optional, str, tagged } from '../declare.js';
import { lazy } from '../util/lazy.js';
import { type FromSandbox, LIMIT_NAMES } from './sandbox-protocol.js';

const fromSandbox = lazy(() =>
  tagged('type', [
    object({ type: literal('ready') }),
    object({ type: literal('log'), line: str() }),
    object({
      type: literal('calls'),
      calls: array(object({ id: int(), name: str(), args: str() })),
      taken: int('nonnegative'),
    }),
    object({
      type: literal('end'),
      ok: bool(),
      text: optional(str()),
      message: optional(str()),
      limit: optional(oneOf(LIMIT_NAMES)),
      aborted: optional(bool()),
      reusable: bool(),
    }),
  ]),
);

export function isFromSandboxMessage(raw: unknown): raw is FromSandbox {
  return fromSandbox().check(raw);
}
