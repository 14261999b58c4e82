/**
 * Soak (on demand, `npm run test:stress`): rounds of runtimes on one fileSessions directory
 * mixing thread-killing faults (exit, throw, oom, hang), delegations, cancels at random points, tools
 * that ignore cancellation, and closes in the middle of work — until SOAK_MS has passed (default 5
 * minutes, never more than 10). At the end the host is alive, every session file loads, and every
 * top-level session can be resumed by a fresh runtime (no lock was left behind).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { Agent, Brood } from '../../src/index.js';
import { createBrood, defineTool, fileSessions, scriptedModels, subagentTool } from '../../src/index.js';
import { route } from '../support/route.js';

const SOAK_MS = Math.min(Number(process.env.SOAK_MS ?? 5 * 60_000), 10 * 60_000);
const dir = mkdtempSync(join(tmpdir(), 'brood-soak-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PROMPTS = ['plain', 'tools', 'delegate', 'fault exit', 'fault throw', 'fault oom', 'fault hang', 'stubborn'];
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function runtime(): Brood {
  const brood = createBrood({
    sessions: fileSessions(dir),
    pool: { threads: 2, hangTimeoutMs: 1_500, cancelGraceMs: 200, resourceLimits: { maxOldGenerationSizeMb: 64 } },
    codeBusyTimeoutMs: 500,
    onDiagnostic: () => undefined,
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          {
            match: 'tools',
            latencyMs: 5,
            turns: [
              {
                toolCalls: [
                  { name: 'work', arguments: {} },
                  { name: 'work', arguments: {} },
                ],
              },
              { text: 'tools done' },
            ],
          },
          {
            match: 'delegate',
            turns: [
              {
                toolCalls: [
                  { name: 'subagent', arguments: { description: 'c', prompt: 'tools child' } },
                  { name: 'subagent', arguments: { description: 'f', prompt: 'fault exit child' } },
                ],
              },
              { text: 'delegated' },
            ],
          },
          ...(['exit', 'throw', 'oom', 'hang'] as const).map((fault) => ({
            match: `fault ${fault}`,
            turns: [{ fault }],
          })),
          { match: 'stubborn', turns: [{ toolCalls: [{ name: 'stubborn', arguments: {} }] }, { text: 'never' }] },
        ],
      }),
    ],
  });
  brood.use(subagentTool({ provider: 'spawn' }));
  brood.tools.register(
    defineTool({
      name: 'work',
      description: 'w',
      parameters: { type: 'object', properties: {} },
      concurrencySafe: true,
      execute: async () => {
        await sleep(5);
        return 'ok';
      },
    }),
  );
  brood.tools.register(
    defineTool({
      name: 'stubborn',
      description: 's',
      parameters: { type: 'object', properties: {} },
      execute: () => new Promise(() => undefined),
    }),
  );
  return brood;
}

async function round(): Promise<number> {
  const brood = runtime();
  const agents: Agent[] = [];
  for (let i = 0; i < 6; i++) agents.push(await brood.createAgent({ model: route }));
  const runs = agents.map(async (agent) => {
    const controller = new AbortController();
    const prompt = pick(PROMPTS);
    if (prompt === 'stubborn' || Math.random() < 0.3) setTimeout(() => controller.abort(), Math.random() * 300).unref();
    return agent.run(prompt, { signal: controller.signal }).catch(() => undefined);
  });
  // Sometimes close in the middle of the work, sometimes after it.
  if (Math.random() < 0.4) await sleep(Math.random() * 200);
  else await Promise.all(runs);
  await brood.close();
  await Promise.all(runs);
  return agents.length;
}

it(
  `soak for ${Math.round(SOAK_MS / 1000)} s: faults, cancels and closes; host alive, every session loadable and resumable`,
  async () => {
    const started = Date.now();
    let rounds = 0;
    let agents = 0;
    while (Date.now() - started < SOAK_MS) {
      agents += await round();
      rounds += 1;
    }
    const reader = fileSessions(dir);
    const files = readdirSync(dir).filter((name) => name.endsWith('.jsonl'));
    for (const file of files) await reader.read(file.slice(0, -'.jsonl'.length));
    expect(readdirSync(dir).filter((name) => name.endsWith('.lock'))).toEqual([]);
    const headers = await reader.list();
    const last = runtime();
    for (const header of headers.filter((h) => h.origin === undefined).slice(-20)) await last.resumeAgent(header.id);
    await last.close();
    console.log(
      `soak: ${rounds} rounds, ${agents} top-level agents, ${files.length} sessions, all loadable (${Math.round((Date.now() - started) / 1000)} s)`,
    );
    expect(files.length).toBeGreaterThanOrEqual(agents);
  },
  11 * 60_000,
);
