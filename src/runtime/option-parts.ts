/**
 * What the runtime reads straight off createBrood's parsed options, defaults applied (src/defaults.ts):
 * the limits every agent runs under, the worker pool runner, and the runner's kind telemetry names.
 */
import type { AgentRuntimeLimits } from '../agents/types.js';
import type { ParsedBroodOptions } from '../config.js';
import { DEFAULTS } from '../defaults.js';
import type { ModelProviderConfig } from '../models/types.js';
import { WorkerRunner } from '../pool/worker-runner.js';
import { isQueueRunnerConfig } from '../queue/config.js';
import type { CodeMode } from '../types.js';
import { withDefaults } from '../util/plain.js';
import type { DriverRunner } from '../wire/runner.js';
import type { DiagnosticSink } from './diagnostics.js';

export function agentLimits(options: ParsedBroodOptions, codeMode: CodeMode): AgentRuntimeLimits {
  return {
    maxParallelToolCalls: options.maxParallelToolCalls ?? DEFAULTS.maxParallelToolCalls,
    codeMode,
    codeBusyTimeoutMs: options.codeBusyTimeoutMs ?? DEFAULTS.codeBusyTimeoutMs,
    codeWallTimeoutMs: options.codeWallTimeoutMs ?? DEFAULTS.codeWallTimeoutMs,
    codeLimits: withDefaults(DEFAULTS.codeResourceLimits, options.codeResourceLimits),
    cancelGraceMs: options.pool?.cancelGraceMs ?? DEFAULTS.cancelGraceMs,
    maxSteps: options.maxSteps ?? DEFAULTS.maxSteps,
    maxInputBytes: options.maxInputBytes ?? DEFAULTS.maxInputBytes,
  };
}

export function driverKind(runner: ParsedBroodOptions['runner']): string {
  return runner === 'inline' ? 'inline' : isQueueRunnerConfig(runner) ? 'queue' : 'worker';
}

export function createWorkerRunner(
  options: ParsedBroodOptions,
  models: ModelProviderConfig[],
  onDiagnostic: DiagnosticSink,
): DriverRunner {
  const pool = options.pool ?? {};
  return new WorkerRunner({
    models,
    onDiagnostic,
    ...(pool.threads === undefined ? {} : { threads: pool.threads }),
    ...(pool.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: pool.idleTimeoutMs }),
    ...(pool.hangTimeoutMs === undefined ? {} : { hangTimeoutMs: pool.hangTimeoutMs }),
    ...(pool.resourceLimits === undefined ? {} : { resourceLimits: pool.resourceLimits }),
  });
}
