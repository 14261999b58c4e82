/**
 * Which delegation call starts a child: recorded in the child's `subagent/descriptor` (`callId`) so
 * that, after a crash, the parent's interrupted call finds the child it started instead of starting
 * another (src/delegation/resume.ts). Read at the start's synchronous entry, like telemetry's call
 * scope, so it costs nothing per promise (no AsyncLocalStorage).
 */
let running: { parentId: string; callId: string } | undefined;
/** Start requests (the runtime's own copies) by the call id that made them. */
const callOfRequest = new WeakMap<object, string>();

/** Runs `start` (synchronous up to its first await) as tool call `callId` of agent `parentId`. */
export function asDelegatingCall<T>(parentId: string, callId: string, start: () => T): T {
  const outer = running;
  running = { parentId, callId };
  try {
    return start();
  } finally {
    running = outer;
  }
}

/** At a start's synchronous entry: `request` (for a child of `parentId`) was made by the running call. */
export function recordDelegatingCall(request: object, parentId: string | undefined): void {
  if (running !== undefined && running.parentId === parentId) callOfRequest.set(request, running.callId);
}

export function delegatingCallOf(request: object): string | undefined {
  return callOfRequest.get(request);
}
