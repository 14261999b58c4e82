/**
 * The driver side's check of what a sandbox thread sends (that thread runs model-written code, so
 * its messages are validated like any other worker's).
 */
import { z } from 'zod';
import { LIMIT_NAMES, type FromSandbox } from './sandbox-protocol.js';

export const fromSandboxMessage: z.ZodType<FromSandbox> = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('log'), line: z.string() }),
  z.object({
    type: z.literal('calls'),
    calls: z.array(z.object({ id: z.number().int(), name: z.string(), args: z.string() })),
    taken: z.number().int().nonnegative(),
  }),
  z.object({
    type: z.literal('end'),
    ok: z.boolean(),
    text: z.string().optional(),
    message: z.string().optional(),
    limit: z.enum(LIMIT_NAMES).optional(),
    aborted: z.boolean().optional(),
    reusable: z.boolean(),
  }),
]);
