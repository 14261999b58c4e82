/**
 * `brood resume`: a `brood run` of a delegating agent on a sessions directory is SIGKILLed while its two
 * children's second model requests are in flight (the loopback model server, here in the test process,
 * holds them and triggers the kill); `brood resume` with the same config then finishes the tree. Every
 * request the killed run had been answered is sent exactly once overall; only the two in flight at the
 * kill are sent again.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI, ROOT, runCli } from '../../support/run-cli.js';

interface ChatBody {
  messages: { role: string; content: string | null }[];
}

let workspace: string;
let server: Server;
let baseURL: string;
/** Requests by conversation (first user message) and step (assistant messages so far). */
const sent = new Map<string, number>();
/** Set by a test: called with each request's key; returning true holds the response (never answered). */
let hold: (key: string) => boolean = () => false;
const held: ServerResponse[] = [];

function keyOf(body: ChatBody): { prompt: string; step: number; key: string } {
  const prompt = body.messages.find((m) => m.role === 'user')?.content ?? '';
  const step = body.messages.filter((m) => m.role === 'assistant').length;
  return { prompt, step, key: `${prompt}#${step}` };
}

/** root: two subagent calls, then an answer from their results; a child: list_dir, then its answer. */
function reply(body: ChatBody): unknown[] {
  const { prompt, step } = keyOf(body);
  const results = body.messages.flatMap((m) => (m.role === 'tool' ? [m.content ?? ''] : []));
  const chunk = (delta: object, finish: string | null = null) => ({
    id: 'chatcmpl-resume',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const usage = { choices: [], usage: { prompt_tokens: 10, completion_tokens: 5 } };
  const calls = (list: [string, object][]) => [
    chunk({
      role: 'assistant',
      tool_calls: list.map(([name, args], index) => ({
        index,
        id: `call_${step}_${index}`,
        type: 'function',
        function: { name, arguments: JSON.stringify(args) },
      })),
    }),
    chunk({}, 'tool_calls'),
    usage,
  ];
  const text = (content: string) => [chunk({ role: 'assistant', content }), chunk({}, 'stop'), usage];
  if (prompt === 'root: go') {
    if (step === 0)
      return calls([
        ['subagent', { description: 'a', prompt: 'child a' }],
        ['subagent', { description: 'b', prompt: 'child b' }],
      ]);
    return text(`root done (${results.filter((r) => r.includes('finished')).length} children)`);
  }
  if (step === 0) return calls([['list_dir', { path: '.' }]]);
  return text(`${prompt} finished`);
}

beforeAll(async () => {
  assertBuilt();
  workspace = await mkdtemp(join(tmpdir(), 'brood-resume-'));
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(raw) as ChatBody;
      const { key } = keyOf(body);
      sent.set(key, (sent.get(key) ?? 0) + 1);
      if (hold(key)) {
        held.push(res);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const chunk of reply(body)) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  for (const res of held.splice(0)) res.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(workspace, { recursive: true, force: true });
});

async function writeConfig(name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const dir = join(workspace, name);
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'agent.json');
  const config = {
    prompt: 'root: go',
    models: [{ id: 'loop', baseURL, models: ['m'] }],
    agent: { model: { provider: 'loop', model: 'm' } },
    tools: ['list_dir'],
    delegation: [{ provider: 'spawn', enableRunInBackground: false }],
    sessions: 'sessions',
    ...extra,
  };
  await writeFile(file, JSON.stringify(config));
  return file;
}

/** `brood run --config file`, SIGKILLed once `killWhen` has seen the requests it waits for. */
function runAndKill(file: string, inFlight: string[]): Promise<{ signal: NodeJS.Signals | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'run', '--config', file], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    const waiting = new Set(inFlight);
    hold = (key) => {
      if (!waiting.has(key)) return false;
      waiting.delete(key);
      if (waiting.size === 0) child.kill('SIGKILL');
      return true;
    };
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(timer);
      hold = () => false;
      for (const res of held.splice(0)) res.destroy();
      resolve({ signal, stdout });
    });
  });
}

describe('brood resume', () => {
  it('finishes a killed brood run: every recovered turn completes, no answered request is sent again', async () => {
    const file = await writeConfig('killed');
    const killed = await runAndKill(file, ['child a#1', 'child b#1']);
    expect(killed.signal).toBe('SIGKILL');
    expect(killed.stdout).not.toContain('root done');

    const resumed = await runCli(['resume', '--config', file]);
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe('root done (2 children)\n');
    // Answered before the kill: sent once in all. In flight at the kill: sent again, once.
    expect(Object.fromEntries(sent)).toEqual({
      'root: go#0': 1,
      'child a#0': 1,
      'child b#0': 1,
      'child a#1': 2,
      'child b#1': 2,
      'root: go#1': 1,
    });

    const again = await runCli(['resume', '--config', file]);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain('nothing to recover');
  });

  it('--sessions names the directory; a directory with nothing interrupted has nothing to recover', async () => {
    const file = await writeConfig('empty');
    const empty = join(workspace, 'empty', 'elsewhere');
    await mkdir(empty);
    const result = await runCli(['resume', '--config', file, '--sessions', empty]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(`brood resume: nothing to recover in ${empty}\n`);
  });

  it('a config without a sessions directory and no --sessions is a usage error (exit 2)', async () => {
    const file = await writeConfig('no-sessions', { sessions: undefined });
    const result = await runCli(['resume', '--config', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^brood resume: .*no sessions directory/);
  });
});
