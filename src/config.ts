/** createBrood's options: validated synchronously at the trust boundary (SPEC §3, INVALID_CONFIG). */

import { z } from 'zod';
import type { ApprovalsOptions } from './approvals/types.js';
import { DEFAULTS } from './defaults.js';
import { modelRouteShape } from './models/route.js';
import { hasFaultTurns } from './models/scripted.js';
import type { ModelProviderConfig } from './models/types.js';
import { inlineKeyError, inlineKeyProviders, isQueueRunnerConfig, type QueueRunnerConfig } from './queue/config.js';
import { budgetSchema } from './scheduler/budget.js';
import { telemetryOptionsSchema } from './telemetry/options.js';
import type { ToolHooks } from './tools/hooks.js';
import type { IdGenerator } from './util/ids.js';

/** Every option parse answers INVALID_CONFIG naming the keys, whatever the host's getters throw. */
export { parseConfig } from './util/untrusted.js';

const positiveInt = z.number().int().positive();
const intIn = (min: number, max: number) => z.number().int().min(min).max(max);

/** createBrood's `codeResourceLimits`: each limit's accepted range (defaults in src/defaults.ts). */
const codeResourceLimitsSchema = z.strictObject({
  memoryMb: intIn(8, 1024).optional(),
  // The engine's own stack region is 5 MiB: a larger limit would let a recursion overrun it.
  stackKb: intIn(64, 4096).optional(),
  maxOutputBytes: intIn(1024, 64 << 20).optional(),
  maxToolCalls: intIn(1, 100_000).optional(),
});
/** Model requests per turn: a positive safe integer (SPEC §15). */
export const maxStepsSchema = z
  .number()
  .refine((n) => Number.isSafeInteger(n) && n > 0, 'must be a positive safe integer');
const signalSchema = z.custom<AbortSignal>((value) => value instanceof AbortSignal, 'must be an AbortSignal');
const codeModeSchema = z.enum(['native', 'code', 'both']);

/**
 * Node.js timers take a signed 32-bit delay: anything larger silently becomes 1 ms, so a limit of
 * "practically forever" would fire at once. Every millisecond option is refused above this.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;
const TIMER_RANGE = `at most ${MAX_TIMER_MS} ms (the largest delay a Node.js timer supports)`;
export const timerMs = (min: 0 | 1) => z.number().finite().min(min).max(MAX_TIMER_MS, TIMER_RANGE);

/**
 * Below this heap a pool thread cannot even load the driver: it dies while booting, before piscina
 * considers it ready, and piscina then stops replacing it, so queued runs would wait forever.
 */
export const MIN_OLD_GENERATION_MB = 32;

/** A limit is a positive safe integer: 0, negatives, NaN, Infinity and fractions are refused. */
const limitCount = z.number().refine((n) => Number.isSafeInteger(n) && n > 0, 'must be a positive integer');

/** createBrood's `limits` (src/scheduler/types.ts); provider ids are checked against the catalog below. */
export const limitsSchema = z.strictObject({
  agents: limitCount.optional(),
  modelRequests: limitCount.optional(),
  providers: z
    .record(
      z.string(),
      z.strictObject({
        concurrent: limitCount.optional(),
        requestsPerMinute: limitCount.optional(),
        tokensPerMinute: limitCount.optional(),
      }),
    )
    .optional(),
  queue: z.strictObject({ max: limitCount.optional(), order: z.enum(['deeper-first', 'fifo']).optional() }).optional(),
});

export const broodOptionsSchema = z
  .strictObject({
    models: z
      .array(
        z.custom<ModelProviderConfig>(
          (value) => typeof value === 'object' && value !== null && 'kind' in value && 'id' in value,
          'a model provider config (scriptedModels(), openAICompatible(), ...)',
        ),
      )
      .optional(),
    sessions: z
      .custom<object>(
        (value) => typeof value === 'object' && value !== null && 'append' in value && 'read' in value,
        'a SessionStore',
      )
      .optional(),
    persona: z.string().optional(),
    maxParallelToolCalls: positiveInt.optional(),
    maxSteps: maxStepsSchema.optional(),
    maxInputBytes: positiveInt.optional(),
    codeMode: codeModeSchema.optional(),
    pool: z
      .strictObject({
        threads: positiveInt
          .max(
            DEFAULTS.maxPoolThreads,
            `at most ${DEFAULTS.maxPoolThreads} (threads start as load requires; see README, Options)`,
          )
          .optional(),
        idleTimeoutMs: timerMs(0).optional(),
        cancelGraceMs: timerMs(0).optional(),
        hangTimeoutMs: timerMs(1).int().optional(),
        resourceLimits: z
          .strictObject({
            maxOldGenerationSizeMb: positiveInt
              .min(
                MIN_OLD_GENERATION_MB,
                `must be at least ${MIN_OLD_GENERATION_MB} (MB): a smaller heap cannot load the driver`,
              )
              .optional(),
            maxYoungGenerationSizeMb: positiveInt.optional(),
            codeRangeSizeMb: positiveInt.optional(),
            stackSizeMb: positiveInt.optional(),
          })
          .optional(),
      })
      .optional(),
    codeBusyTimeoutMs: timerMs(1).int().optional(),
    codeWallTimeoutMs: timerMs(1).int().optional(),
    codeResourceLimits: codeResourceLimitsSchema.optional(),
    providers: z
      .array(z.custom<object>((value) => typeof value === 'object' && value !== null, 'a SubagentProvider'))
      .optional(),
    runner: z
      .union([
        z.enum(['worker', 'inline']),
        z.custom<QueueRunnerConfig>(isQueueRunnerConfig, "'worker', 'inline' or a queueRunner(...)"),
      ])
      .optional(),
    limits: limitsSchema.optional(),
    preferences: z
      .custom<{ get(key: string): unknown }>(
        (value) =>
          typeof value === 'object' && value !== null && typeof (value as { get?: unknown }).get === 'function',
        'an object with get(key)',
      )
      .optional(),
    approvals: z
      .strictObject({
        policy: z.custom<ApprovalsOptions['policy']>((value) => typeof value === 'function', 'a function').optional(),
        children: z.enum(['deny', 'ask']).optional(),
        timeoutMs: timerMs(1).int().optional(),
      })
      .optional(),
    hooks: z
      .strictObject({
        beforeToolCall: z
          .custom<ToolHooks['beforeToolCall']>((value) => typeof value === 'function', 'a function')
          .optional(),
        afterToolCall: z
          .custom<ToolHooks['afterToolCall']>((value) => typeof value === 'function', 'a function')
          .optional(),
        onToolError: z
          .custom<ToolHooks['onToolError']>((value) => typeof value === 'function', 'a function')
          .optional(),
      })
      .optional(),
    onDiagnostic: z
      .custom<(message: string) => void>((value) => typeof value === 'function', 'a function (message: string) => void')
      .optional(),
    telemetry: telemetryOptionsSchema.optional(),
    _internal: z
      .strictObject({
        generateId: z.custom<IdGenerator>((value) => typeof value === 'function', 'a function').optional(),
        now: z.custom<() => number>((value) => typeof value === 'function', 'a function').optional(),
        setTimer: z
          .custom<(fn: () => void, ms: number) => () => void>((value) => typeof value === 'function', 'a function')
          .optional(),
      })
      .optional(),
  })
  .superRefine((options, ctx) => {
    const busy = options.codeBusyTimeoutMs ?? DEFAULTS.codeBusyTimeoutMs;
    const hang = options.pool?.hangTimeoutMs ?? DEFAULTS.hangTimeoutMs;
    if (hang <= busy) {
      ctx.addIssue({
        code: 'custom',
        path: ['pool', 'hangTimeoutMs'],
        message: `must exceed codeBusyTimeoutMs (${busy})`,
      });
    }
    if (options.runner === 'inline' && options.models?.some(hasFaultTurns)) {
      ctx.addIssue({
        code: 'custom',
        path: ['models'],
        message: "scripts with fault turns are refused when runner is 'inline' (a fault would take the host down)",
      });
    }
    for (const id of unknownLimitedProviders(options))
      ctx.addIssue({ code: 'custom', path: ['limits', 'providers', id], message: 'names no catalog provider' });
    const inlineKeys = isQueueRunnerConfig(options.runner) ? inlineKeyProviders(options.models ?? []) : [];
    if (inlineKeys.length > 0)
      ctx.addIssue({ code: 'custom', path: ['models'], message: inlineKeyError(inlineKeys).message });
  });

/** `limits.providers` keys that no configured provider has (the default catalog is one 'scripted' provider). */
function unknownLimitedProviders(options: {
  models?: ModelProviderConfig[] | undefined;
  limits?: { providers?: Record<string, unknown> | undefined } | undefined;
}): string[] {
  const known = new Set((options.models ?? [{ id: 'scripted' }]).map((config) => config.id));
  return Object.keys(options.limits?.providers ?? {}).filter((id) => !known.has(id));
}

export type ParsedBroodOptions = z.infer<typeof broodOptionsSchema>;

/** What may name a session in any store (a file name for fileSessions): one rule for every store. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
export function isValidSessionId(id: unknown): id is string {
  return typeof id === 'string' && SESSION_ID_PATTERN.test(id) && id !== '.' && id !== '..';
}
const sessionIdSchema = z.string().refine(isValidSessionId, "letters, digits, _ . - (at most 128), not '.' or '..'");

export const createAgentOptionsSchema = z.strictObject({
  id: sessionIdSchema.optional(),
  model: z.strictObject(modelRouteShape()),
  persona: z.string().optional(),
  toolFilter: z
    .strictObject({ allow: z.array(z.string()).optional(), deny: z.array(z.string()).optional() })
    .optional(),
  codeMode: codeModeSchema.optional(),
  depth: z.unknown().optional(),
  maxSteps: maxStepsSchema.optional(),
  budget: budgetSchema.optional(),
  signal: signalSchema.optional(),
  // Checked by givenHistory (INVALID_ARGS naming the message), after the route names its provider.
  history: z.unknown().optional(),
});

export const usageOptionsSchema = z.strictObject({ subtree: z.boolean().optional() });

export const resumeAgentOptionsSchema = z.strictObject({
  model: z.unknown().optional(),
  depth: z.unknown().optional(),
  signal: signalSchema.optional(),
  // Checked by checkContext (INVALID_ARGS): it must be a structured-clone value.
  context: z.unknown().optional(),
});
