// The start burst of a fan-out, seen from the parent's session store (bench/lib/brood.mjs's
// stampedSessions): from the moment the root's answer with its N delegation calls reaches the store
// (its first `assistant/message`) to the moment each child's first `model/request` does. The time to
// the N-th child, divided by N, is what starting one child costs the parent when N start at once.
import { percentile, round } from './stats.mjs';

export function startBurst() {
  let rootId;
  let answerAt;
  const firstRequestAt = new Map();
  return {
    /** Watches the root with this session id from now on; forgets the previous root's stamps. */
    watch(id) {
      rootId = id;
      answerAt = undefined;
      firstRequestAt.clear();
    },
    onAppend(id, events, now) {
      if (rootId === undefined) return;
      if (id === rootId) {
        if (answerAt === undefined && events.some((e) => e.type === 'assistant/message')) answerAt = now;
      } else if (!firstRequestAt.has(id) && events.some((e) => e.type === 'model/request')) {
        firstRequestAt.set(id, now);
      }
    },
    /** The burst of the watched root's last run, which delegated `n` children. */
    summary(n) {
      if (answerAt === undefined || firstRequestAt.size < n)
        return {
          error: `saw the root's answer: ${answerAt !== undefined}; first requests of ${firstRequestAt.size}/${n} children`,
        };
      const offsets = [...firstRequestAt.values()].map((at) => at - answerAt);
      const lastMs = Math.max(...offsets);
      return {
        children: n,
        firstChildMs: round(Math.min(...offsets), 2),
        medianChildMs: round(percentile(offsets, 50), 1),
        lastChildMs: round(lastMs, 1),
        perChildUs: round((lastMs * 1000) / n, 1),
      };
    },
  };
}
