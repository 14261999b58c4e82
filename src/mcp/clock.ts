/**
 * The clock an MCP connection waits on: the restart backoff (restart-policy.ts) and a stdio server's
 * exit grace (stdio-transport.ts). Hosts always get the real one. Process tests inject a faster
 * clock (a wait of `ms` lasts less), so the restart schedule and the shutdown sequence play out in
 * milliseconds against a real server process; what the connection reports (`retryInMs`) is still
 * the policy's own figure.
 */
export interface McpClock {
  now(): number;
  /** Runs `callback` once `ms` of this clock's time has passed; cancel with clearTimeout. */
  setTimeout(callback: () => void, ms: number): NodeJS.Timeout;
}

export const REAL_CLOCK: McpClock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
};
