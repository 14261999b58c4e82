/** Usage arithmetic: the optional cache counters add up like the required ones, and stay absent when never reported. */
import type { Usage } from '../types.js';

export function addUsage(into: Usage, add: Partial<Usage> | undefined): void {
  into.inputTokens += Number(add?.inputTokens ?? 0);
  into.outputTokens += Number(add?.outputTokens ?? 0);
  if (typeof add?.cacheReadTokens === 'number')
    into.cacheReadTokens = (into.cacheReadTokens ?? 0) + add.cacheReadTokens;
  if (typeof add?.cacheWriteTokens === 'number')
    into.cacheWriteTokens = (into.cacheWriteTokens ?? 0) + add.cacheWriteTokens;
  if (typeof add?.reasoningTokens === 'number')
    into.reasoningTokens = (into.reasoningTokens ?? 0) + add.reasoningTokens;
}

export function sumUsage(...parts: Usage[]): Usage {
  const total: Usage = { inputTokens: 0, outputTokens: 0 };
  for (const part of parts) addUsage(total, part);
  return total;
}
