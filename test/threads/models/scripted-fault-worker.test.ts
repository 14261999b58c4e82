/**
 * The one fault cheap and safe to prove here: 'exit' inside a real worker thread ends that worker with
 * code 1 while the host survives. The TypeScript adapter is bundled with esbuild so plain Node can load
 * it in the worker (vitest's transform does not reach worker threads).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { build } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { scriptedModels } from '../../../src/models/index.js';

let dir: string;
let adapterUrl: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'brood-models-'));
  const outfile = join(dir, 'scripted-adapter.mjs');
  const entry = fileURLToPath(new URL('../../../src/models/scripted-adapter.ts', import.meta.url));
  await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', outfile, logLevel: 'silent' });
  adapterUrl = pathToFileURL(outfile).href;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function runInWorker(prompt: string): Promise<{ exitCode: number; messages: unknown[] }> {
  const config = scriptedModels({
    id: 'f',
    scripts: [
      { match: 'die', turns: [{ fault: 'exit' }] },
      { match: 'ok', turns: [{ text: 'fine' }] },
    ],
  });
  const source = `
    import { parentPort, workerData } from 'node:worker_threads';
    const { createScriptedAdapter } = await import(workerData.adapterUrl);
    const adapter = createScriptedAdapter(workerData.config);
    const response = await adapter.request({
      route: { provider: 'f', model: 'scripted' }, system: '', ownStart: 0, tools: [],
      messages: [{ role: 'user', text: workerData.prompt }], signal: new AbortController().signal,
    });
    parentPort.postMessage(response);
  `;
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(source)}`), {
    workerData: { adapterUrl, config, prompt },
  });
  const messages: unknown[] = [];
  worker.on('message', (m) => messages.push(m));
  return new Promise((resolve, reject) => {
    worker.on('error', reject);
    worker.on('exit', (exitCode) => resolve({ exitCode, messages }));
  });
}

it("'exit' fault ends the worker with code 1 and the host survives", async () => {
  const died = await runInWorker('die now');
  expect(died.exitCode).toBe(1);
  expect(died.messages).toEqual([]);
  const fine = await runInWorker('ok');
  expect(fine.exitCode).toBe(0);
  expect(fine.messages).toMatchObject([{ finish: 'stop', text: 'fine' }]);
});
