/**
 * Runs one assistant message's tool calls (SPEC §7.2): consecutive parallel-class calls share a
 * rolling pool capped at `limit`, an exclusive call is a barrier that runs alone, the class is read
 * right before each start, and results are committed in model order whatever order they finish in.
 */
import type { ToolCallRecord } from './models/types.js';
import type { SessionEventDataMap } from './sessions/event-types.js';
import type { ConcurrencyClass, ToolResult } from './types.js';

export interface ToolPoolHooks {
  /** May answer at once (the parent, next to the registry) or later (a driver asking the parent). */
  classify(call: ToolCallRecord): ConcurrencyClass | Promise<ConcurrencyClass>;
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
  let nextToCommit = 0;
  // A count and one waiter, not a set raced at every start: Promise.race over P in-flight calls
  // attached P reactions per start (a 256-call message at P=64: ~12,000), in whichever thread runs it.
  let running = 0;
  let wake: (() => void) | undefined;
  const settledOne = (): Promise<void> => new Promise((resolve) => (wake = resolve));

  const commitReady = (): void => {
    for (let result = results[nextToCommit]; result !== undefined; result = results[nextToCommit]) {
      hooks.commit(calls[nextToCommit] as ToolCallRecord, result);
      nextToCommit += 1;
    }
  };

  const settle = (index: number, result: ToolResult): void => {
    results[index] = result;
    running -= 1;
    commitReady();
    const waiter = wake;
    wake = undefined;
    waiter?.();
  };

  // One reaction per call (a wide fan-out keeps one per running child while it waits).
  const start = (call: ToolCallRecord, index: number): Promise<void> => {
    hooks.started(call);
    running += 1;
    return hooks.execute(call).then(
      (result) => settle(index, result),
      (error: unknown) => settle(index, failedResult(error)),
    );
  };

  for (const [index, call] of calls.entries()) {
    if (signal.aborted) break;
    const cls = await classOf(hooks, call);
    if (cls === 'exclusive') {
      while (running > 0) await settledOne();
      if (signal.aborted) break;
      await start(call, index);
      continue;
    }
    while (running >= limit) await settledOne();
    if (signal.aborted) break;
    void start(call, index);
  }
  while (running > 0) await settledOne();
  for (let index = 0; index < calls.length; index += 1) {
    if (results[index] === undefined) results[index] = ABORTED_BEFORE_DISPATCH_RESULT;
  }
  commitReady();
  return results as ToolResult[];
}

/** Anything uncertain about a class (a classifier that throws or rejects) is a barrier. */
function classOf(hooks: ToolPoolHooks, call: ToolCallRecord): ConcurrencyClass | Promise<ConcurrencyClass> {
  try {
    const cls = hooks.classify(call);
    return typeof cls === 'string' ? cls : cls.catch((): ConcurrencyClass => 'exclusive');
  } catch {
    return 'exclusive';
  }
}

/** A call's `tool/call` event data: the same whichever side (driver or parent) schedules the call. */
export function toolCallData(call: ToolCallRecord): SessionEventDataMap['tool/call'] {
  return { callId: call.callId, name: call.name, arguments: call.arguments };
}

/** A committed call's `tool/result` event data: the same whichever side schedules the call. */
export function toolResultData(call: ToolCallRecord, result: ToolResult): SessionEventDataMap['tool/result'] {
  const errorCode = result.error?.code;
  const ranWith = result.rewrittenArguments;
  return {
    callId: call.callId,
    name: call.name,
    isError: result.isError,
    content: result.content,
    ...(errorCode === undefined ? {} : { errorCode }),
    ...(ranWith === undefined ? {} : { arguments: ranWith }),
    ...(result.parts === undefined ? {} : { parts: result.parts }),
  };
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
