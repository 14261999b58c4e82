/**
 * Crash durability (SPEC §6 "accepted means durable"): a delegation tree on fileSessions runs in a
 * child process (fixtures/crash-tree.mjs, built dist) that is SIGKILLed at seeded points of its
 * progress. A new runtime in this process then opens the directory and must find:
 * - every session loadable (a torn tail repaired), seq contiguous;
 * - depths intact: delegationDepth = parent + 1 along parentSession links, root 0;
 * - continuable children resumable (a followup from the resumed parent runs as a completed turn);
 * - no accepted message lost or run twice: after resuming every agent with unclaimed messages, each
 *   user/message id is claimed by exactly one turn/start, every turn is closed, and the fixture's
 *   append-only effects file holds no call id twice (the adapter invents a fresh id per call).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Agent, SessionEvent, SessionHeader } from '../../../src/index.js';
import { createBrood, defineTool, fileSessions, messageTools, subagentTool } from '../../../src/index.js';
import { killPoint, runUntilKilled } from '../../support/crash-fixture.js';
import { ofType } from '../../support/events.js';
import { crashModels, installCrashTools } from './fixtures/crash-shared.mjs';

const FIXTURE = fileURLToPath(new URL('./fixtures/crash-tree.mjs', import.meta.url));
const SEEDS = 20;
const PARALLEL = 2;

let base: string;
/** Progress lines of an uninterrupted run: kill points are spread over this range. */
let fullRunLines = 0;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'brood-crash-'));
  const full = await runFixture(join(base, 'full'), Infinity);
  expect(full.killed).toBe(false);
  expect(full.lines.at(-1)).toBe('done');
  fullRunLines = full.lines.length;
}, 30_000);
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Runs the fixture and SIGKILLs it right after its `killAfter`-th progress line. */
function runFixture(dir: string, killAfter: number): Promise<{ lines: string[]; killed: boolean }> {
  return runUntilKilled([FIXTURE, dir, join(dir, 'effects.log')], 'fixture', killAfter);
}

function unclaimedIds(events: SessionEvent[]): string[] {
  const claimed = new Set(ofType(events, 'turn/start').flatMap((e) => e.data.messageIds as string[]));
  return ofType(events, 'user/message')
    .map((e) => String(e.data.id))
    .filter((id) => !claimed.has(id));
}

/** A resumed one-shot child is released after its run: it counts as idle. */
async function allIdle(agents: Iterable<Agent>): Promise<void> {
  await Promise.all(
    [...agents].map((agent) =>
      agent.whenIdle().catch((error: { code?: string }) => {
        if (error.code !== 'DISPOSED') throw error;
      }),
    ),
  );
}

async function recoverAndCheck(dir: string): Promise<{ sessions: number; followups: number }> {
  const store = fileSessions(dir);
  // 1. Every session loads (a torn tail is repaired on load), seq contiguous.
  const headers = await store.list();
  const byId = new Map<string, SessionHeader>(headers.map((h) => [h.id, h]));
  for (const header of headers) {
    const { events } = await store.read(header.id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_e, i) => i));
    // 2. Depths along parentSession links.
    if (header.parentSession === undefined) {
      expect(header.delegationDepth).toBe(0);
    } else {
      expect(header.origin).toBe('subagent');
      const parent = byId.get(header.parentSession);
      expect(parent, `parent of ${header.id}`).toBeDefined();
      expect(header.delegationDepth).toBe(parent!.delegationDepth + 1);
    }
  }

  // 3. A new runtime resumes every agent that holds accepted, unclaimed messages (or a turn left open);
  // resumed turns may start new children, so repeat until nothing is left.
  // Inline: what is checked is the store; where the resumed drivers run does not matter, and a pool
  // thread per seed would boot an isolate each time (~0.1 s of CPU, 20+ seeds).
  const brood = createBrood({ sessions: store, models: crashModels(), runner: 'inline' });
  installCrashTools(brood, { defineTool, subagentTool, messageTools }, join(dir, 'effects.log'));
  let followups = 0;
  try {
    const live = new Map<string, Agent>();
    const resume = async (id: string): Promise<Agent> => {
      const agent = live.get(id) ?? (await brood.resumeAgent(id));
      live.set(id, agent);
      return agent;
    };
    for (let round = 0; round < 6; round += 1) {
      let resumed = 0;
      for (const header of await store.list()) {
        const { events } = await store.read(header.id);
        const open = ofType(events, 'turn/start').length !== ofType(events, 'turn/end').length;
        if (unclaimedIds(events).length === 0 && !open) continue;
        await resume(header.id);
        resumed += 1;
      }
      await allIdle(live.values());
      if (resumed === 0) break;
    }

    // 4. Continuable children resume: a followup from the (resumed) parent runs in the same conversation
    // (the first and the last continuable child of the tree, to keep the run short).
    const continuable: SessionHeader[] = [];
    for (const header of await store.list()) {
      const descriptor = ofType((await store.read(header.id)).events, 'subagent/descriptor')[0];
      if (descriptor?.data.mode === 'continuable' && header.parentSession !== undefined) continuable.push(header);
    }
    for (const header of new Set([continuable[0], continuable.at(-1)])) {
      if (header?.parentSession === undefined) continue;
      const parent = await resume(header.parentSession);
      const messageId = await brood.subagents.followup(parent, header.id, 'followup after crash', {
        signal: new AbortController().signal,
      });
      followups += 1;
      await allIdle([await resume(header.id), parent]);
      const after = (await store.read(header.id)).events;
      const turn = ofType(after, 'turn/start').find((e) => (e.data.messageIds as string[]).includes(messageId));
      expect(turn, `followup turn of ${header.id}`).toBeDefined();
      const end = ofType(after, 'turn/end').find((e) => e.data.turn === turn!.data.turn);
      expect(end?.data.reason).toBe('completed');
    }
    await allIdle(live.values());
  } finally {
    await brood.close();
  }

  // 5. Nothing lost, nothing run twice.
  const reopened = fileSessions(dir); // brood.close() closed the runtime's store
  const final = await reopened.list();
  for (const header of final) {
    const { events } = await reopened.read(header.id);
    const claims = ofType(events, 'turn/start').flatMap((e) => e.data.messageIds as string[]);
    expect(new Set(claims).size, `a message of ${header.id} was claimed twice`).toBe(claims.length);
    expect(ofType(events, 'turn/start').every((e) => (e.data.messageIds as string[]).length === 1)).toBe(true);
    expect(unclaimedIds(events), `unclaimed messages left in ${header.id}`).toEqual([]);
    expect(ofType(events, 'turn/end')).toHaveLength(ofType(events, 'turn/start').length);
    const callIds = ofType(events, 'tool/call').map((e) => e.data.callId);
    expect(new Set(callIds).size).toBe(callIds.length);
  }
  const effectsFile = join(dir, 'effects.log');
  const effects = existsSync(effectsFile) ? readFileSync(effectsFile, 'utf8').split('\n').filter(Boolean) : [];
  const keys = effects.map((line) => line.split(' ').slice(0, 2).join(' '));
  const twice = keys.filter((key, i) => keys.indexOf(key) !== i);
  expect(twice, 'tool side effects that ran twice').toEqual([]);
  return { sessions: final.length, followups };
}

it(`survives SIGKILL at ${SEEDS} seeded points of a delegation tree on fileSessions`, async () => {
  expect(fullRunLines).toBeGreaterThan(50);
  // A run's progress-line count varies a little with scheduling, so a late kill point may come after a
  // shorter run already finished. Such a run is still recovered and checked, and seeds continue until
  // SEEDS runs were really killed (bounded, so a fixture that stops being killable fails loudly).
  const maxSeeds = SEEDS * 2;
  let nextSeed = 1;
  let kills = 0;
  const summary: { seed: number; killAt: number; sessions: number; followups: number }[] = [];
  const work = async (seed: number): Promise<void> => {
    const dir = join(base, `seed-${seed}`);
    const killAt = killPoint(seed, fullRunLines);
    const run = await runFixture(dir, killAt);
    if (run.killed) kills += 1;
    if (!existsSync(dir)) return; // killed before the directory existed: nothing accepted, nothing to check
    const checked = await recoverAndCheck(dir);
    if (run.killed) summary.push({ seed, killAt, ...checked });
  };
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (kills < SEEDS && nextSeed <= maxSeeds) await work(nextSeed++);
    }),
  );
  expect(kills, `only ${kills} of ${nextSeed - 1} runs were killed before finishing`).toBeGreaterThanOrEqual(SEEDS);
  // The kill points really were spread: some early, some late; continuable children were exercised.
  const points = summary.map((s) => s.killAt);
  expect(Math.min(...points)).toBeLessThan(fullRunLines / 3);
  expect(Math.max(...points)).toBeGreaterThan((2 * fullRunLines) / 3);
  expect(summary.some((s) => s.followups > 0)).toBe(true);
  console.log(
    `crash durability: ${summary.length} kills over ${fullRunLines} progress lines, ${summary.reduce((n, s) => n + s.sessions, 0)} sessions recovered, ${summary.reduce((n, s) => n + s.followups, 0)} followups`,
  );
}, 120_000);
