/**
 * Adapters are user code (kind 'module'), so the driver does not trust their responses: a response
 * that breaks the ModelResponse contract ends the request in `error` with a diagnostic instead of
 * flowing into the loop (a nameless tool call used to reach the gateway, fail validation there and be
 * re-requested forever; a wrong shape threw inside the loop). Found by test/reliability/faults.test.ts.
 */
import { z } from 'zod';
import { reasoningBlocksSchema } from '../models/reasoning.js';
import type { ModelResponse } from '../models/types.js';

const count = z.number().finite().nonnegative();

const responseSchema = z.object({
  text: z.string(),
  toolCalls: z.array(z.object({ callId: z.string().min(1), name: z.string().min(1), arguments: z.string() })),
  finish: z.enum(['stop', 'tool-calls', 'max-tokens', 'refusal', 'error']),
  usage: z.object({
    inputTokens: count,
    outputTokens: count,
    cacheReadTokens: count.optional(),
    cacheWriteTokens: count.optional(),
  }),
  diagnostic: z.string().optional(),
  reasoning: reasoningBlocksSchema.optional(),
});

/** The response as the loop may use it, or a one-line reason why it breaks the adapter contract. */
export function checkModelResponse(
  raw: unknown,
): { ok: true; response: ModelResponse } | { ok: false; reason: string } {
  const parsed = responseSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.map(String).join('.') : '(response)';
    return {
      ok: false,
      reason: `the model adapter returned a malformed response: ${where}: ${issue?.message ?? 'invalid'}`,
    };
  }
  // Call ids key re-attachment after a recovery and commit order: two calls may not share one.
  const ids = parsed.data.toolCalls.map((call) => call.callId);
  if (new Set(ids).size !== ids.length)
    return { ok: false, reason: 'the model adapter returned a malformed response: duplicate tool call ids' };
  return { ok: true, response: parsed.data as ModelResponse };
}
