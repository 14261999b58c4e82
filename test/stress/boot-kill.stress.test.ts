/**
 * Starting and closing runtimes while their pool threads load the worker entry, and
 * killing threads mid-boot, never aborts the process. The loop runs in a child process against the
 * built package (dist/), so a native abort (`FATAL ERROR: v8::Module::IsGraphAsync ...`, SIGABRT) is
 * reported as such. Whatever shape the worker entry takes later, this must stay green.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('./fixtures/boot-kill.mjs', import.meta.url));
const INDEX = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
const ITERATIONS = Number(process.env.BOOT_KILL_ITERATIONS ?? 400);

it(`${ITERATIONS} runtimes killed while their threads boot: no abort, every close settles`, async () => {
  const child = spawn(process.execPath, [SCRIPT, INDEX, String(ITERATIONS)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('exit', (c, s) => resolve([c, s])),
  );
  console.log(stdout.trim());
  expect(stderr).not.toContain('FATAL ERROR');
  expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
  expect(stdout).toContain(`boot-kill: ${ITERATIONS} iterations ok`);
});
