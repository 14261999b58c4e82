/** The zod schema of `codeResourceLimits` (kept apart so the sandbox thread does not load zod). */
import { z } from 'zod';

const int = (min: number, max: number) => z.number().int().min(min).max(max);

export const codeResourceLimitsSchema = z.strictObject({
  memoryMb: int(8, 1024).optional(),
  // The engine's own stack region is 5 MiB: a larger limit would let a recursion overrun it.
  stackKb: int(64, 4096).optional(),
  maxOutputBytes: int(1024, 64 << 20).optional(),
  maxToolCalls: int(1, 100_000).optional(),
});
