/**
 * Reading where a conversation stopped, from its tail: used by a recovering driver (which calls must
 * be re-issued?) and by the parent (was the driver waiting on the model when it died?).
 */
import type { ChatMessage, ToolCallRecord } from './types.js';

export interface HistoryTail {
  /** The last message that is not a tool result (undefined for an empty history). */
  last: Exclude<ChatMessage, { role: 'tool' }> | undefined;
  /** Tool calls of `last` (when an assistant message) that have no result yet. */
  unanswered: ToolCallRecord[];
}

export function historyTail(history: readonly ChatMessage[]): HistoryTail {
  const answered = new Set<string>();
  let index = history.length - 1;
  for (let entry = history[index]; entry?.role === 'tool'; entry = history[--index]) answered.add(entry.callId);
  const last = history[index] as HistoryTail['last'];
  const unanswered = last?.role === 'assistant' ? last.toolCalls.filter((call) => !answered.has(call.callId)) : [];
  return { last, unanswered };
}

/** True when the next move after this history is a model request (nothing left to execute). */
export function awaitingModel(history: readonly ChatMessage[]): boolean {
  const { last, unanswered } = historyTail(history);
  if (last === undefined || last.role === 'user') return true;
  return last.toolCalls.length > 0 && unanswered.length === 0;
}
