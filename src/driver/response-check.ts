/**
 * Adapters are user code (kind 'module'), so the driver does not trust their responses: a response
 * that breaks the ModelResponse contract ends the request in `error` with a diagnostic instead of
 * flowing into the loop (a nameless tool call used to reach the gateway, fail validation there and be
 * re-requested forever; a wrong shape threw inside the loop). Found by test/reliability/faults.test.ts.
 */
import { z } from 'zod';
import { reasoningBlocksSchema } from '../models/reasoning.js';
import type { ModelResponse } from '../models/types.js';
import { arrayOf, isObj, isReasoningBlock, isStr, isToolCall, isUsage, optional } from '../util/hand-checks.js';
import { lazy } from '../util/lazy.js';

/** The contract as a zod schema, built on first use (src/util/lazy.ts): it only words a refusal. */
export const responseSchema = lazy(() => {
  const count = z.number().finite().nonnegative();
  return z.object({
    text: z.string(),
    toolCalls: z.array(z.object({ callId: z.string().min(1), name: z.string().min(1), arguments: z.string() })),
    finish: z.enum(['stop', 'tool-calls', 'max-tokens', 'refusal', 'error']),
    usage: z.object({
      inputTokens: count,
      outputTokens: count,
      cacheReadTokens: count.optional(),
      cacheWriteTokens: count.optional(),
      reasoningTokens: count.optional(),
    }),
    diagnostic: z.string().optional(),
    reasoning: reasoningBlocksSchema().optional(),
  });
});

/** The response as the loop may use it, or a one-line reason why it breaks the adapter contract. */
export function checkModelResponse(
  raw: unknown,
): { ok: true; response: ModelResponse } | { ok: false; reason: string } {
  // Every response of every request passes here: a hand check (test/driver/response-check.property)
  // spares zod's allocations on the hot path; zod still words the reason when the check refuses.
  const response = isValidResponse(raw) ? cleanResponse(raw) : parseResponse(raw);
  if (typeof response === 'string') return { ok: false, reason: response };
  // Call ids key re-attachment after a recovery and commit order: two calls may not share one.
  if (hasDuplicateIds(response.toolCalls))
    return { ok: false, reason: 'the model adapter returned a malformed response: duplicate tool call ids' };
  return { ok: true, response };
}

/** Pairwise below a few calls (most responses make one to three): no set and no id array per response. */
function hasDuplicateIds(calls: readonly { callId: string }[]): boolean {
  if (calls.length > 8) return new Set(calls.map((call) => call.callId)).size !== calls.length;
  for (let i = 1; i < calls.length; i++)
    for (let j = 0; j < i; j++) if (calls[i]?.callId === calls[j]?.callId) return true;
  return false;
}

function parseResponse(raw: unknown): ModelResponse | string {
  const parsed = responseSchema().safeParse(raw);
  if (parsed.success) return parsed.data as ModelResponse;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.map(String).join('.') : '(response)';
  return `the model adapter returned a malformed response: ${where}: ${issue?.message ?? 'invalid'}`;
}

// ——— the hand check: mirrors responseSchema rule by rule (the shared pieces in hand-checks.ts) ———
type Raw = Record<string, unknown>;
const FINISHES = new Set(['stop', 'tool-calls', 'max-tokens', 'refusal', 'error']);
// Built once: this runs for every response.
const isToolCalls = arrayOf(isToolCall);
const isOptionalText = optional(isStr);
const isOptionalReasoning = optional(arrayOf(isReasoningBlock));

function isValidResponse(v: unknown): v is Raw {
  return (
    isObj(v) &&
    isStr(v.text) &&
    isToolCalls(v.toolCalls) &&
    isStr(v.finish) &&
    FINISHES.has(v.finish) &&
    isUsage(v.usage) &&
    isOptionalText(v.diagnostic) &&
    isOptionalReasoning(v.reasoning)
  );
}

/** What zod's parse returns for a valid response: known keys only, in new objects (adapters may reuse theirs). */
function cleanResponse(v: Raw): ModelResponse {
  const usage = v.usage as Raw;
  const response: Raw = {
    text: v.text,
    toolCalls: (v.toolCalls as Raw[]).map(({ callId, name, arguments: args }) => ({ callId, name, arguments: args })),
    finish: v.finish,
    usage: {
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      ...(usage.cacheReadTokens === undefined ? {} : { cacheReadTokens: usage.cacheReadTokens }),
      ...(usage.cacheWriteTokens === undefined ? {} : { cacheWriteTokens: usage.cacheWriteTokens }),
      ...(usage.reasoningTokens === undefined ? {} : { reasoningTokens: usage.reasoningTokens }),
    },
  };
  if (v.diagnostic !== undefined) response.diagnostic = v.diagnostic;
  if (v.reasoning !== undefined) response.reasoning = (v.reasoning as Raw[]).map(cleanBlock);
  return response as unknown as ModelResponse;
}

function cleanBlock(block: Raw): Raw {
  return block.type === 'thinking'
    ? { type: block.type, thinking: block.thinking, signature: block.signature }
    : { type: block.type, data: block.data };
}
