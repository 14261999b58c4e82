/**
 * Every runtime default, written once. Config schemas, the runtime and the worker runner read these
 * names; documentation quotes them. Changing a default is a one-line change here.
 */
export const DEFAULTS = {
  /** Tool calls one turn may run at once (SPEC §7). */
  maxParallelToolCalls: 10,
  /** run_code busy time without a pending tool call. */
  codeBusyTimeoutMs: 5_000,
  /** run_code wall time. */
  codeWallTimeoutMs: 300_000,
  /** How long a cancelled driver may take to settle before its thread is recycled. */
  cancelGraceMs: 2_000,
  /** A thread whose heartbeat stalls this long is treated as hung (must exceed codeBusyTimeoutMs). */
  hangTimeoutMs: 10_000,
  /** Idle pool threads above the warm set (one per core) are released after this long. */
  idleTimeoutMs: 30_000,
  /**
   * The most pool threads one runtime (or `brood host`) may be given. Each is its own V8 isolate
   * (~13 MB once booted, up to its heap cap under load) and starts only when load needs it, but a
   * thousand of them is never what a host wants: refused with INVALID_CONFIG above this.
   */
  maxPoolThreads: 256,
  /** Heap cap of each pool thread. */
  maxOldGenerationSizeMb: 1024,
  /** Model requests per turn before a turn ends 'max-steps' (SPEC §15). */
  maxSteps: 100,
  /** Events a subscriber may fall behind by before deltas coalesce and the oldest drop. */
  eventBuffer: 10_000,
  /** job_output's default wait. */
  jobWaitMs: 30_000,
  /** When a continuable child's report reaches its parent (subagentTool reportDelivery). */
  reportDelivery: 'next-step',
} as const;
