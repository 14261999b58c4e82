/**
 * Every option default, written once: createBrood's, the plugins' (subagentTool, job tools, mcpTools,
 * acpProvider), the model adapters' and the queue runner's. Config schemas and the code that applies
 * an option read these names; documentation quotes them. Changing a default is a one-line change here.
 */
export const DEFAULTS = {
  /** Tool calls one turn may run at once (SPEC §7). */
  maxParallelToolCalls: 10,
  /** run_code busy time without a pending tool call. */
  codeBusyTimeoutMs: 5_000,
  /** run_code wall time. */
  codeWallTimeoutMs: 300_000,
  /** What one run_code program may use (createBrood's `codeResourceLimits`; ranges in src/config.ts). */
  codeResourceLimits: { memoryMb: 64, stackKb: 1024, maxOutputBytes: 1 << 20, maxToolCalls: 1_000 },
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
  /** The largest content part (image, file, text) a message may carry, in bytes (createBrood `maxInputBytes`). */
  maxInputBytes: 20 * 1024 * 1024,
  /**
   * Young generation of each pool thread (V8 splits it into two semi-spaces and a large-object
   * budget: 6 MB is 2 MB semi-spaces). V8's own default lets a thread's semi-spaces grow to 16 MB
   * each under a burst of allocation and keeps them: 32 MB of a 47 MB heap in a 1,000-child fan-out
   * whose live heap was 14 MB. A driver's state lives across a model request (a second or more), so
   * it is promoted whatever the size and a larger young generation only holds more garbage: peak RSS
   * growth per child at N = 1,000 (bench/wide-fanout.mjs) V8's default 116–121 KB, 12 MB 72–74 KB,
   * 6 MB 65 KB, with CPU per child by thread group the same within the noise at N = 1,000 and 10,000.
   */
  maxYoungGenerationSizeMb: 6,
  /** Model requests per turn before a turn ends 'max-steps' (SPEC §15). */
  maxSteps: 100,
  /** memorySessions (the default store): what it keeps of trees whose agents are all disposed. */
  memorySessions: { retain: 'recent', retainBytes: 64 * 1024 * 1024 },
  /** Events a subscriber may fall behind by before deltas coalesce and the oldest drop. */
  eventBuffer: 10_000,
  /** A prompt section's order when it names none (lower first). */
  sectionOrder: 100,
  /** subagentTool: the tool's name and the delegation depth cap (SPEC §11). */
  subagentTool: { toolName: 'subagent', maxDepth: 3 },
  /** job_output's default wait. */
  jobWaitMs: 30_000,
  /** mcpTools: how long one tool call may take. */
  mcpTimeoutMs: 60_000,
  /** acpProvider: how long the agent may take to answer a request. */
  acpTimeoutMs: 60_000,
  /** HTTP model adapters: retries of a failed request (`retry` option). */
  retry: { retries: 2, baseDelayMs: 500, maxDelayMs: 8_000, maxRetryAfterMs: 60_000 },
  /** anthropicCompatible: `max_tokens` when neither the route nor the catalog gives one. */
  anthropicMaxTokens: 4_096,
  /** anthropicCompatible: reasoning effort → `thinking.budget_tokens` (the API's minimum is 1024). */
  anthropicThinkingBudgets: { minimal: 1_024, low: 2_048, medium: 8_192, high: 16_384, xhigh: 32_768, max: 65_536 },
  /** queueRunner and `brood host`: the BullMQ queue, the Redis key prefix, and how long an activation may wait for a host. */
  queue: { name: 'brood', prefix: 'brood', activationTimeoutMs: 10_000 },
  /** When a continuable child's report reaches its parent (subagentTool reportDelivery). */
  reportDelivery: 'next-step',
  /** The largest report (UTF-8 bytes) a continuable child may hand its parent: as large as a tool result a run_code program may receive. */
  maxReportBytes: 1 << 20,
  /** createBrood `telemetry`: no prompts or outputs on spans; W3C trace context into model requests and hosts. */
  telemetry: { captureContent: false, propagate: true, tracerName: 'brood' },
  /**
   * mcpServer and `brood mcp`: the name in initialize, task support, how often a client is told to poll
   * a task, the largest request accepted, and where `--http` listens.
   */
  mcpServer: {
    name: 'brood',
    tasks: true,
    taskPollIntervalMs: 500,
    maxRequestBytes: 32 * 1024 * 1024,
    httpHost: '127.0.0.1',
    httpPath: '/mcp',
    /** `--http`: sessions alive at once, and how long one may go without a request open before it is closed. */
    maxSessions: 64,
    sessionIdleMs: 30 * 60 * 1000,
    /** Tasks one client (one mcpServer) may have working at once. */
    maxTasks: 16,
  },
  /** createBrood approvals: how long a request waits for the host, and what a child's call that needs one gets. */
  approvals: { timeoutMs: 24 * 60 * 60 * 1000, children: 'deny' },
} as const;
