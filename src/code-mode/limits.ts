/**
 * The one wording of every run_code limit's errored result. What each limit bounds is documented on
 * `CodeResourceLimits` (src/types.ts), its default in src/defaults.ts, its range in src/config.ts.
 */
import type { ResolvedCodeLimits } from '../types.js';
import type { LimitName } from './sandbox-protocol.js';

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
