/**
 * Running a crash fixture: a node script that writes one progress line per step on stdout, so a test
 * can SIGKILL it (or something it depends on) right after a chosen line, at seeded points.
 */
import { type ChildProcess, spawn } from 'node:child_process';

export interface FixtureRun {
  child: ChildProcess;
  /** The progress lines so far. */
  lines: string[];
  /** Resolves when it exits; `killed` when it was SIGKILLed. Rejects on any other non-zero exit. */
  exited: Promise<{ killed: boolean }>;
}

/** Spawns `node <args>`; `onLine(n)` is called after its n-th progress line. `label` names it in errors. */
export function spawnFixture(
  args: string[],
  label: string,
  onLine?: (count: number, run: FixtureRun) => void,
): FixtureRun {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const run: FixtureRun = { child, lines, exited: Promise.resolve({ killed: false }) };
  let buffer = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
      lines.push(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
      onLine?.(lines.length, run);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  run.exited = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL' || code === 0) resolve({ killed: signal === 'SIGKILL' });
      else reject(new Error(`${label} exited with ${code ?? signal}: ${stderr}`));
    });
  });
  return run;
}

/** Runs `node <args>` and SIGKILLs it right after its `killAfter`-th progress line. */
export async function runUntilKilled(
  args: string[],
  label: string,
  killAfter = Infinity,
): Promise<{ lines: string[]; killed: boolean }> {
  const run = spawnFixture(args, label, (count, { child }) => {
    if (count === killAfter) child.kill('SIGKILL');
  });
  const { killed } = await run.exited;
  return { lines: run.lines, killed };
}

/** Deterministic per-seed kill point in 1..max (mulberry32). */
export function killPoint(seed: number, max: number): number {
  let t = (seed * 0x9e3779b9) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  const r = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  return 1 + Math.floor(r * max);
}
