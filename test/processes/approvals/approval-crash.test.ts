/**
 * Approvals survive the host: a host on fileSessions is SIGKILLed while a call waits for
 * approval (fixtures/approval-host.mjs, built dist). A new runtime resuming the agent lists the same
 * request; approved, the tool runs once; a third runtime never asks again.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import type { Brood } from '../../../src/index.js';
import { createBrood, defineTool, fileSessions, scriptedModels } from '../../../src/index.js';
import { until } from '../../support/until.js';
// @ts-expect-error plain ESM fixture shared with the child process
import { deployTool, models } from './fixtures/approval-shared.mjs';

const FIXTURE = fileURLToPath(new URL('./fixtures/approval-host.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../../dist/index.js', import.meta.url));
const base = mkdtempSync(join(tmpdir(), 'brood-approval-crash-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Starts the host and SIGKILLs it as soon as it has surfaced a request; resolves with the request's id. */
function killWhilePending(dir: string, effects: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FIXTURE, DIST, dir, effects], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let approvalId: string | undefined;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /pending (\S+)\n/.exec(out);
      if (match && approvalId === undefined) {
        approvalId = match[1];
        child.kill('SIGKILL');
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('error', reject);
    child.on('exit', (_code, signal) =>
      signal === 'SIGKILL' && approvalId ? resolve(approvalId) : reject(new Error(`host ended early: ${err}`)),
    );
  });
}

function runtime(dir: string, effects: string): Brood {
  const brood = createBrood({ sessions: fileSessions(dir), runner: 'inline', models: models(scriptedModels) });
  brood.tools.register(deployTool(defineTool, effects));
  return brood;
}

const runsIn = (effects: string): string[] =>
  existsSync(effects) ? readFileSync(effects, 'utf8').split('\n').filter(Boolean) : [];

it('SIGKILL while a request is pending: the resumed agent lists it, approval runs the tool once, never asked again', async () => {
  const dir = join(base, 'sessions');
  const effects = join(base, 'effects.log');
  const approvalId = await killWhilePending(dir, effects);
  expect(runsIn(effects)).toEqual([]);

  const second = runtime(dir, effects);
  expect(second.approvals.pending()).toEqual([]);
  await second.resumeAgent('root');
  const [request] = second.approvals.pending();
  expect(request).toMatchObject({ approvalId, agentId: 'root', tool: 'deploy', args: { service: 'web' } });
  await second.approvals.respond(approvalId, { approve: true });
  await until(async () =>
    (await second.sessions.read('root')).events.some(
      (event) => event.type === 'user/message' && event.data.source === 'approval',
    ),
  );
  expect(runsIn(effects)).toHaveLength(1);
  const events = (await second.sessions.read('root')).events;
  expect(events.find((event) => event.type === 'approval/result')?.data).toMatchObject({
    isError: false,
    content: 'deployed web',
  });
  await second.close();

  const third = runtime(dir, effects);
  await third.resumeAgent('root');
  expect(third.approvals.pending()).toEqual([]);
  await third.close();
  expect(runsIn(effects)).toHaveLength(1);
});
