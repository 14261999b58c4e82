/**
 * Crash resume (docs/sessions.md "Crash resume"): a 3-level delegation tree on fileSessions runs in a
 * child process (fixtures/resume-tree.mjs, built dist) that is SIGKILLed at seeded points of its
 * progress; its model is a loopback server here, outside the killed process, that counts every
 * request by conversation and step. A new process then runs `brood.recover()`, and:
 * - every turn of every session ends, the root's completed;
 * - no request whose answer the killed process had logged is sent again;
 * - no non-idempotent call (`charge`) ran twice;
 * - the root's answer equals the uninterrupted run's wherever no call's outcome was unknown.
 * Worker runner and inline runner.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../src/index.js';
import { fileSessions } from '../../../src/index.js';
import { ofType } from '../../support/events.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/resume-tree.mjs', import.meta.url));
const SEEDS = 20;
const PARALLEL = 2;

interface ChatBody {
  messages: { role: string; content: string | null }[];
}

/** What each conversation (its first user message) asks for, by step. */
function script(prompt: string, step: number, results: string[]): { calls?: [string, object][]; text?: string } {
  if (step > 0) return { text: `${prompt} => ${results.join(' | ')}` };
  if (prompt === 'root: build')
    return {
      calls: [
        ['subagent', { description: 'a', prompt: 'mid a' }],
        ['subagent', { description: 'b', prompt: 'mid b' }],
        ['charge', { tag: 'root' }],
      ],
    };
  if (prompt.startsWith('mid '))
    return {
      calls: [
        ['subagent', { description: 'leaf', prompt: `leaf ${prompt}` }],
        ['charge', { tag: prompt }],
        ['upsert', { tag: prompt }],
      ],
    };
  return {
    calls: [
      ['charge', { tag: prompt }],
      ['upsert', { tag: prompt }],
    ],
  };
}

/** The request key: which conversation, which step (assistant messages so far). */
function keyOf(body: ChatBody): string {
  const prompt = body.messages.find((m) => m.role === 'user')?.content ?? '';
  return `${prompt}#${body.messages.filter((m) => m.role === 'assistant').length}`;
}

let server: Server;
let baseURL: string;
const sent = new Map<string, number>();

function answer(body: ChatBody): unknown[] {
  const prompt = body.messages.find((m) => m.role === 'user')?.content ?? '';
  const step = body.messages.filter((m) => m.role === 'assistant').length;
  const lastAssistant = body.messages.map((m) => m.role).lastIndexOf('assistant');
  const results = body.messages.slice(lastAssistant + 1).flatMap((m) => (m.role === 'tool' ? [m.content ?? ''] : []));
  const { calls, text } = script(prompt, step, results);
  const usage = { choices: [], usage: { prompt_tokens: 10, completion_tokens: 5 } };
  const chunk = (delta: object, finish: string | null = null) => ({
    id: 'chatcmpl-r',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  if (calls) {
    const toolCalls = calls.map(([name, args], index) => ({
      index,
      id: `c${step}_${index}`,
      type: 'function',
      function: { name, arguments: JSON.stringify(args) },
    }));
    return [chunk({ role: 'assistant', tool_calls: toolCalls }), chunk({}, 'tool_calls'), usage];
  }
  return [chunk({ role: 'assistant', content: text }), chunk({}, 'stop'), usage];
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(raw) as ChatBody;
      // Each run's base URL starts with its own directory name: counts never mix between parallel seeds.
      const key = `${(req.url ?? '').split('/')[1]} ${keyOf(body)}`;
      sent.set(key, (sent.get(key) ?? 0) + 1);
      // A little latency, different per conversation, so kills land while requests are in flight too.
      setTimeout(
        () => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          for (const chunk of answer(body)) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
          res.end('data: [DONE]\n\n');
        },
        5 + (key.length % 4) * 5,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The request counts' namespace of a run directory (its base URL's first path segment). */
function namespaceOf(dir: string): string {
  return dir.split('/').slice(-2).join('_');
}

/** Deterministic per-seed kill point (mulberry32). */
function killPoint(seed: number, max: number): number {
  let t = (seed * 0x9e3779b9) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  const r = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  return 1 + Math.floor(r * max);
}

/** Runs the fixture; in `run` mode SIGKILLs it right after its `killAfter`-th progress line. */
function runFixture(
  mode: 'run' | 'recover',
  runner: string,
  dir: string,
  killAfter = Infinity,
): Promise<{ lines: string[]; killed: boolean }> {
  return new Promise((resolve, reject) => {
    const url = `${baseURL}/${namespaceOf(dir)}/v1`;
    const child = spawn(process.execPath, [FIXTURE, mode, runner, dir, join(dir, 'effects.log'), url], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let buffer = '';
    let stderr = '';
    let killed = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
        lines.push(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
        if (!killed && lines.length >= killAfter) {
          killed = true;
          child.kill('SIGKILL');
        }
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL' || code === 0) resolve({ lines, killed: signal === 'SIGKILL' });
      else reject(new Error(`fixture (${mode}) exited with ${code}: ${stderr}`));
    });
  });
}

async function readAll(dir: string): Promise<Map<string, SessionEvent[]>> {
  const store = fileSessions(dir);
  const all = new Map<string, SessionEvent[]>();
  for (const header of await store.list()) all.set(header.id, (await store.read(header.id)).events);
  return all;
}

/** The request keys whose answers the log holds: per conversation, one per logged assistant message. */
function answeredKeys(sessions: Map<string, SessionEvent[]>, namespace: string): string[] {
  const keys: string[] = [];
  for (const events of sessions.values()) {
    const prompt = ofType(events, 'user/message')[0]?.data.text;
    const answers = ofType(events, 'assistant/message').filter((e) => e.data.finish !== 'error');
    for (let step = 0; step < answers.length; step += 1) keys.push(`${namespace} ${prompt}#${step}`);
  }
  return keys;
}

function effects(dir: string): string[] {
  const file = join(dir, 'effects.log');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

function rootOutput(sessions: Map<string, SessionEvent[]>): string | undefined {
  const events = sessions.get('root') ?? [];
  return ofType(events, 'assistant/message').at(-1)?.data.text as string | undefined;
}

describe.each(['worker', 'inline'])("runner: '%s'", (runner) => {
  let base: string;
  let fullLines = 0;
  let fullOutput: string | undefined;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), `brood-resume-${runner}-`));
    const full = await runFixture('run', runner, join(base, 'full'));
    expect(full.killed).toBe(false);
    expect(full.lines.at(-1)).toBe('done');
    fullLines = full.lines.length;
    fullOutput = rootOutput(await readAll(join(base, 'full')));
    expect(fullOutput).toContain('root: build =>');
  }, 60_000);
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it(`recovers the tree killed at ${SEEDS} seeded points: nothing answered asked again, no side effect twice`, async () => {
    const outcomes: string[] = [];
    let childrenCut = 0;
    const check = async (seed: number): Promise<void> => {
      const dir = join(base, `seed-${seed}`);
      const point = killPoint(seed, fullLines - 2);
      const killed = await runFixture('run', runner, dir, point);
      // The writer batches appends by timing, so a run may log fewer lines than the full one did and end
      // before a late kill point: that seed crashed nothing, and the next seed is tried instead.
      if (!killed.killed) return;
      const before = await readAll(dir);
      const answered = answeredKeys(before, namespaceOf(dir));
      const childCut = [...before].some(
        ([id, events]) => id !== 'root' && ofType(events, 'turn/start').length > ofType(events, 'turn/end').length,
      );
      if (childCut) childrenCut += 1;
      const sentAtKill = new Map(answered.map((key) => [key, sent.get(key) ?? 0]));
      const recovery = await runFixture('recover', runner, dir);
      expect(recovery.lines.at(-1), `seed ${seed}`).toBe('done');
      expect(recovery.lines).toContain('again 0');
      const after = await readAll(dir);
      // Every turn of every session ended; the root's last one completed.
      for (const [id, events] of after) {
        expect(ofType(events, 'turn/end').length, `seed ${seed} ${id}`).toBe(ofType(events, 'turn/start').length);
      }
      // Killed before the root's message was accepted: there was nothing to resume.
      const accepted = ofType(after.get('root') ?? [], 'user/message').length > 0;
      if (accepted)
        expect(ofType(after.get('root') ?? [], 'turn/end').at(-1)?.data.reason, `seed ${seed}`).toBe('completed');
      // Nothing answered is asked again (each key counted across both processes; the server is here).
      for (const [key, count] of sentAtKill) expect(sent.get(key), `seed ${seed} ${key}`).toBe(count);
      // No non-idempotent call ran twice (a line per run: kind, agent, call id, tag).
      const charges = effects(dir).filter((line) => line.startsWith('charge '));
      expect(new Set(charges).size, `seed ${seed}`).toBe(charges.length);
      const unknown = [...after.values()].some((events) =>
        ofType(events, 'tool/result').some((e) => String(e.data.content).includes('TOOL_OUTCOME_UNKNOWN')),
      );
      if (accepted && !unknown) expect(rootOutput(after), `seed ${seed}`).toBe(fullOutput);
      outcomes.push(!accepted ? 'not accepted' : unknown ? 'unknown' : 'equal');
    };
    // Seeds in order until SEEDS of them killed the run mid-way (at most twice as many tried).
    let nextSeed = 1;
    while (outcomes.length < SEEDS && nextSeed <= 2 * SEEDS) {
      const batch = Array.from({ length: PARALLEL }, () => nextSeed++);
      await Promise.all(batch.map(check));
    }
    expect(outcomes.length).toBeGreaterThanOrEqual(SEEDS);
    // The seeds reach both kinds of resume: some answers equal the uninterrupted run's, some calls were of unknown outcome.
    expect(outcomes).toContain('equal');
    expect(outcomes).toContain('unknown');
    // ...and some kills cut a child mid-turn: it was resumed inside its parent's call.
    expect(childrenCut).toBeGreaterThan(0);
  }, 240_000);
});
