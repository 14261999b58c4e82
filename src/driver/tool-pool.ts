/**
 * Runs one assistant message's tool calls (SPEC §7.2): consecutive parallel-class calls share a
 * rolling pool capped at `limit`, an exclusive call is a barrier that runs alone, the class is read
 * right before each start, and results are committed in model order whatever order they finish in.
 */
import type { ToolCallRecord } from '../models/types.js';
import type { ToolResult } from '../types.js';
import type { ConcurrencyClass } from './types.js';

export interface ToolPoolHooks {
  classify(call: ToolCallRecord): Promise<ConcurrencyClass>;
  execute(call: ToolCallRecord): Promise<ToolResult>;
  /** Called once per call, in model order, when the call and every call before it have settled. */
  commit(call: ToolCallRecord, result: ToolResult): void;
  /** Called right before a call starts (in model order). */
  started(call: ToolCallRecord): void;
}

export const ABORTED_BEFORE_DISPATCH_RESULT: ToolResult = {
  isError: true,
  content: 'Error: the turn was cancelled before this call started',
  error: { code: 'ABORTED_BEFORE_DISPATCH', message: 'the turn was cancelled before this call started' },
};

/** What stops new starts: an AbortSignal, or anything else that can say so (only `aborted` is read). */
export interface StopSignal {
  readonly aborted: boolean;
}

export async function runToolCalls(
  calls: ToolCallRecord[],
  limit: number,
  signal: StopSignal,
  hooks: ToolPoolHooks,
): Promise<ToolResult[]> {
  const results: (ToolResult | undefined)[] = new Array(calls.length);
  const inFlight = new Set<Promise<void>>();
  let nextToCommit = 0;

  const commitReady = (): void => {
    for (let result = results[nextToCommit]; result !== undefined; result = results[nextToCommit]) {
      hooks.commit(calls[nextToCommit] as ToolCallRecord, result);
      nextToCommit += 1;
    }
  };

  const start = (call: ToolCallRecord, index: number): Promise<void> => {
    hooks.started(call);
    const settled = hooks
      .execute(call)
      .then(
        (result) => result,
        (error: unknown) => failedResult(error),
      )
      .then((result) => {
        results[index] = result;
        inFlight.delete(settled);
        commitReady();
      });
    inFlight.add(settled);
    return settled;
  };

  for (const [index, call] of calls.entries()) {
    if (signal.aborted) break;
    const cls = await hooks.classify(call).catch((): ConcurrencyClass => 'exclusive');
    if (cls === 'exclusive') {
      await Promise.all(inFlight);
      if (signal.aborted) break;
      await start(call, index);
      continue;
    }
    while (inFlight.size >= limit) await Promise.race(inFlight);
    if (signal.aborted) break;
    void start(call, index);
  }
  await Promise.all(inFlight);
  for (let index = 0; index < calls.length; index += 1) {
    if (results[index] === undefined) results[index] = ABORTED_BEFORE_DISPATCH_RESULT;
  }
  commitReady();
  return results as ToolResult[];
}

function failedResult(error: unknown): ToolResult {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return {
    isError: true,
    content: `Error: ${message}`,
    error: typeof code === 'string' ? { code, message } : { message },
  };
}
