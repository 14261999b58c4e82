/**
 * run_code resource limits (createBrood's `codeResourceLimits`): what each bounds, its default and
 * its accepted range, and the one wording of every limit's errored result.
 */
import { withDefaults } from '../plain.js';
import type { LimitName } from './sandbox-protocol.js';

export interface CodeResourceLimits {
  /** The program's heap in MiB (8–1024, default 64). The engine's whole memory is capped a little above it. */
  memoryMb?: number;
  /** The program's stack in KiB (64–4096, default 1024): roughly 5 nested calls per KiB. */
  stackKb?: number;
  /** Logged lines plus the return value, UTF-8 bytes (1 KiB–64 MiB, default 1 MiB). */
  maxOutputBytes?: number;
  /** Tool calls one program may make (1–100,000, default 1,000). */
  maxToolCalls?: number;
}

export type ResolvedCodeLimits = Required<CodeResourceLimits>;

export const CODE_LIMIT_DEFAULTS: ResolvedCodeLimits = {
  memoryMb: 64,
  stackKb: 1024,
  maxOutputBytes: 1 << 20,
  maxToolCalls: 1_000,
};

export function resolveCodeLimits(limits: CodeResourceLimits | undefined): ResolvedCodeLimits {
  return withDefaults(CODE_LIMIT_DEFAULTS, limits);
}

export interface LimitValues extends ResolvedCodeLimits {
  busyMs: number;
  wallMs: number;
}

export function limitMessage(
  limit: LimitName,
  values: Pick<LimitValues, 'busyMs' | 'wallMs'> & Partial<LimitValues>,
): string {
  switch (limit) {
    case 'busy':
      return `run_code ran ${values.busyMs} ms without awaiting a tool call (codeBusyTimeoutMs)`;
    case 'wall':
      return `run_code exceeded its wall-clock limit of ${values.wallMs} ms (codeWallTimeoutMs)`;
    case 'memory':
      return `run_code exceeded its memory limit of ${values.memoryMb} MB (codeResourceLimits.memoryMb)`;
    case 'stack':
      return `run_code exceeded its stack limit of ${values.stackKb} KB (codeResourceLimits.stackKb)`;
    case 'output':
      return `run_code output exceeded ${values.maxOutputBytes} bytes (codeResourceLimits.maxOutputBytes)`;
    case 'toolCalls':
      return `run_code made more than ${values.maxToolCalls} tool calls (codeResourceLimits.maxToolCalls)`;
  }
}
