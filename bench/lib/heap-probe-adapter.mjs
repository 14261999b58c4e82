// A model adapter (moduleAdapter) that answers with its pool thread's id and V8 heap after a full GC:
// the soak row reads each thread's heap through it. Requests overlap for `holdMs` so that probes started
// together land on different threads.
import { threadId } from 'node:worker_threads';

export function createAdapter(config) {
  const holdMs = Number(config.options.holdMs ?? 50);
  return {
    async request() {
      await new Promise((resolve) => setTimeout(resolve, holdMs));
      globalThis.gc?.();
      globalThis.gc?.();
      const text = JSON.stringify({ threadId, heapUsed: process.memoryUsage().heapUsed });
      return { text, toolCalls: [], finish: 'stop', usage: { inputTokens: 0, outputTokens: 0 } };
    },
  };
}
