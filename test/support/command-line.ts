/** The `brood` command line in this process (src/cli/cli.ts), its output captured, and its usage-error shape. */
import { expect } from 'vitest';
import { runCommandLine } from '../../src/cli/cli.js';
import type { Spawned } from './run-cli.js';

/** `brood <args>` in this process: the exit code and what it wrote to each stream. */
export async function runInProcess(args: string[]): Promise<Spawned & { code: number }> {
  const outcome = { stdout: '', stderr: '' };
  const code = await runCommandLine(args, {
    stdout: { write: (text: string) => (outcome.stdout += text) },
    stderr: { write: (text: string) => (outcome.stderr += text) },
  });
  return { code, ...outcome };
}

/** A usage error or a bad config: exit 2, nothing on stdout, one line on stderr matching `pattern`. */
export function expectUsageError(result: Spawned, pattern: RegExp): void {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
}
