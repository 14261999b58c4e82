/** Reasoning blocks cross the worker boundary and the session log, so they are checked where they re-enter. */
import { z } from 'zod';
import { lazy } from '../util/lazy.js';
import type { ReasoningBlock } from './types.js';

/** Built on first use (src/util/lazy.ts): pool threads load this module at boot, for the response schema. */
export const reasoningBlocksSchema = lazy(() =>
  z.array(
    z.union([
      z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() }),
      z.object({ type: z.literal('redacted_thinking'), data: z.string() }),
    ]),
  ),
);

/** `{ reasoning }` for an assistant message rebuilt from logged event data, or `{}` when absent or unusable. */
export function reasoningField(data: Record<string, unknown>): { reasoning?: ReasoningBlock[] } {
  if (data.reasoning === undefined) return {};
  const parsed = reasoningBlocksSchema().safeParse(data.reasoning);
  return parsed.success && parsed.data.length > 0 ? { reasoning: parsed.data } : {};
}
