/** SPEC §14: the built `brood` bin — demo, inspect, trace, run, and exit codes. */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackModel, type LoopbackModel } from '../../support/loopback-model.js';
import { assertBuilt, runCli, type Spawned } from '../../support/run-cli.js';

let tmp: string;
let sessionsDir: string;
let demo: Spawned;

beforeAll(async () => {
  assertBuilt();
  tmp = await mkdtemp(join(tmpdir(), 'brood-cli-'));
  sessionsDir = join(tmp, 'sessions');
  demo = await runCli(['demo', '--dir', sessionsDir]);
}, 60_000);

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** Headers straight from the JSONL files, independent of the CLI's own reader. */
async function headers(): Promise<{ id: string; parentSession?: string; delegationDepth: number }[]> {
  const files = (await readdir(sessionsDir)).filter((f) => f.endsWith('.jsonl'));
  return Promise.all(
    files.map(async (f) => JSON.parse((await readFile(join(sessionsDir, f), 'utf8')).split('\n')[0]!)),
  );
}

function expectOneLine(result: Spawned, pattern: RegExp): void {
  expect(result.code).toBe(2);
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
}

describe('brood demo (non-TTY)', () => {
  it('exits 0 with plain progress lines, the final tree and the summary', () => {
    expect(demo.stderr).toBe('');
    expect(demo.code).toBe(0);
    expect(demo.stdout).not.toContain('\x1b['); // no cursor movement when stdout is not a TTY
    expect(demo.stdout).toMatch(/^\[\s*\d+(ms|\.\d+s)\] sub_\S+ "verify outliers" depth 2 running/m);
    expect(demo.stdout).toContain('Delegation tree');
    expect(demo.stdout).toMatch(/└─ sub_\S+\s+verify outliers\s+2\s+completed/);
    expect(demo.stdout).toMatch(/Summary \(.*lead completed\)/);
    expect(demo.stdout).toMatch(/review draft\s+1\s+continuable\s+completed×2\s+2/);
    expect(demo.stdout).toMatch(/total \(6 agents\)\s+2\s+/);
    expect(demo.stdout).toContain('Lead answer: Brief:');
  });

  it('writes one session per agent: a lead, four children, one grandchild', async () => {
    const all = await headers();
    expect(all).toHaveLength(6);
    expect(all.filter((h) => h.parentSession === undefined)).toHaveLength(1);
    expect(all.map((h) => h.delegationDepth).sort()).toEqual([0, 1, 1, 1, 1, 2]);
  });
});

describe('brood inspect', () => {
  it('prints the delegation tree with stop reasons, depth, usage and durations', async () => {
    const result = await runCli(['inspect', sessionsDir]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`${sessionsDir}: 6 sessions, 1 tree`);
    expect(result.stdout).toMatch(/^agent\s+label\s+depth\s+mode\s+stop\s+turns\s+tokens in\/out\s+duration$/m);
    expect(result.stdout).toMatch(/│ {2}└─ sub_\S+\s+verify outliers\s+2\s+one-shot\s+completed\s+1\s+\d+\/\d+\s+\d/);
    expect(result.stdout).toMatch(/^agent_\S+\s+Research brief.*\s0\s+top-level\s+completed×\d+/m);
  });

  it('--json gives one record per agent with usage', async () => {
    const result = await runCli(['inspect', sessionsDir, '--json']);
    const nodes = JSON.parse(result.stdout) as {
      depth: number;
      usage: { inputTokens: number };
      stopReasons: string[];
    }[];
    expect(nodes).toHaveLength(6);
    for (const node of nodes) {
      expect(node.usage.inputTokens).toBeGreaterThan(0);
      expect(node.stopReasons.every((r) => r === 'completed')).toBe(true);
    }
  });
});

describe('brood trace', () => {
  type Event = {
    ph: string;
    name: string;
    cat?: string;
    pid: number;
    tid: number;
    ts?: number;
    dur?: number;
    args?: { name?: string };
  };

  it('emits Chrome trace events: one named track per agent, nested X spans for turns, requests and tool calls', async () => {
    const root = (await headers()).find((h) => h.parentSession === undefined)!;
    const result = await runCli(['trace', sessionsDir, root.id]);
    expect(result.code).toBe(0);
    const { traceEvents } = JSON.parse(result.stdout) as { traceEvents: Event[] };
    const spans = traceEvents.filter((e) => e.ph === 'X');
    expect(new Set(spans.map((e) => e.cat))).toEqual(new Set(['turn', 'model', 'tool']));
    expect(spans.every((e) => e.pid === 1 && Number.isInteger(e.ts) && e.dur! >= 0)).toBe(true);
    // One track (tid) per agent carries its turns; each is named after the agent.
    const turnTids = new Set(spans.filter((e) => e.cat === 'turn').map((e) => e.tid));
    expect(turnTids.size).toBe(6);
    const names = traceEvents.filter((e) => e.ph === 'M' && e.name === 'thread_name');
    for (const header of await headers()) expect(names.some((e) => e.args?.name?.startsWith(header.id))).toBe(true);
    expect(spans.some((e) => e.name === 'tool subagent')).toBe(true);
    expect(spans.some((e) => e.name === 'tool search_notes')).toBe(true);
    expectProperNesting(spans);
  });

  it('--out writes the file; a subtree id traces only that subtree', async () => {
    const child = (await headers()).find((h) => h.delegationDepth === 1)!;
    const out = join(tmp, 'trace.json');
    const result = await runCli(['trace', sessionsDir, child.id, '--out', out]);
    expect(result.code).toBe(0);
    const { traceEvents } = JSON.parse(await readFile(out, 'utf8')) as { traceEvents: Event[] };
    expect(traceEvents.some((e) => e.ph === 'X' && e.cat === 'turn')).toBe(true);
  });

  /** Perfetto requires complete events on one thread to nest; partial overlaps are dropped. */
  function expectProperNesting(spans: Event[]): void {
    const byTid = new Map<number, Event[]>();
    for (const span of spans) byTid.set(span.tid, [...(byTid.get(span.tid) ?? []), span]);
    for (const list of byTid.values()) {
      const sorted = [...list].sort((a, b) => a.ts! - b.ts! || b.dur! - a.dur!);
      const stack: number[] = [];
      for (const span of sorted) {
        while (stack.length > 0 && stack.at(-1)! <= span.ts!) stack.pop();
        if (stack.length > 0) expect(span.ts! + span.dur!).toBeLessThanOrEqual(stack.at(-1)!);
        stack.push(span.ts! + span.dur!);
      }
    }
  }
});

describe('usage errors exit 2 with one line on stderr', () => {
  it.each([
    [['demo', '--bogus'], /^brood demo: Unknown option '--bogus'/],
    [['inspect'], /^brood inspect: expected <dir>/],
    [['frobnicate'], /^brood: unknown command 'frobnicate'/],
    [[], /^brood: missing command/],
    [['trace', '/definitely/not/here', 'x'], /not a directory/],
    [['run'], /--config <file.json> is required/],
    [['run', '--config'], /^brood run: Option '--config <value>' argument missing/],
  ])('%j', async (args, pattern) => {
    expectOneLine(await runCli(args), pattern);
  });

  it('trace of an unknown id', async () => {
    expectOneLine(await runCli(['trace', sessionsDir, 'nope']), /no session nope/);
  });
});

describe('brood run --config', () => {
  let model: LoopbackModel;
  let workspace: string;

  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'brood-run-'));
    await writeFile(join(workspace, 'note.txt'), 'the launch is on Tuesday');
    model = await startLoopbackModel({
      toolCall: { name: 'read_file', arguments: { path: 'note.txt' } },
      answer: (tool) => `The note says: ${tool ?? '(nothing)'}`,
    });
  });

  afterAll(async () => {
    await model.close();
    await rm(workspace, { recursive: true, force: true });
  });

  const config = (overrides: Record<string, unknown> = {}) => ({
    models: [{ id: 'loop', baseURL: model.baseURL, apiKeyEnv: 'LOOP_KEY', models: ['loop-model'] }],
    agent: { model: { provider: 'loop', model: 'loop-model' } },
    tools: ['read_file', 'list_dir'],
    delegation: [{ provider: 'spawn', maxDepth: 1, enableRunInBackground: false }],
    prompt: 'What does the note say?',
    ...overrides,
  });

  async function writeConfig(value: unknown, name = 'config.json'): Promise<string> {
    const file = join(workspace, name);
    await writeFile(file, typeof value === 'string' ? value : JSON.stringify(value));
    return file;
  }

  it('runs the agent against the endpoint, using a built-in tool, and prints the answer', async () => {
    const result = await runCli(['run', '--config', await writeConfig(config())], { env: { LOOP_KEY: 'sk-loop' } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('The note says: the launch is on Tuesday\n');
    const [first] = model.requests.slice(-2);
    expect(first?.headers.authorization).toBe('Bearer sk-loop');
    expect(first?.body.tools?.map((t) => t.function.name).sort()).toEqual(['list_dir', 'read_file', 'subagent']);
  });

  it('read_file is confined to the root: an escaping path comes back as a tool error', async () => {
    const escaping = await startLoopbackModel({
      toolCall: { name: 'read_file', arguments: { path: '../../etc/passwd' } },
      answer: (tool) => `tool said: ${tool}`,
    });
    try {
      const file = await writeConfig(
        config({ models: [{ id: 'loop', baseURL: escaping.baseURL, models: ['loop-model'] }] }),
        'escape.json',
      );
      const result = await runCli(['run', '--config', file]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^tool said: Error: .*(outside the allowed root|no such file)/);
    } finally {
      await escaping.close();
    }
  });

  it('--prompt overrides the config prompt', async () => {
    const file = await writeConfig(config({ tools: [] }), 'no-tools.json');
    const result = await runCli(['run', '--config', file, '--prompt', 'hello'], { env: { LOOP_KEY: 'k' } });
    expect(result.code).toBe(0);
    expect(model.requests.at(-1)?.body.messages.at(-1)).toMatchObject({ role: 'user', content: 'hello' });
  });

  it('an endpoint that keeps failing ends the agent with error: exit 1 and one line', async () => {
    const failing = await startLoopbackModel({ status: 500, answer: () => '' });
    try {
      const file = await writeConfig(
        config({ models: [{ id: 'loop', baseURL: failing.baseURL, models: ['loop-model'] }] }),
        'failing.json',
      );
      const result = await runCli(['run', '--config', file]);
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(/^brood run: agent ended error: .*500/);
    } finally {
      await failing.close();
    }
  });

  it('a subagent that failed under a lead that completed: exit 0 and one summary line on stderr', async () => {
    const delegating = await startLoopbackModel({
      toolCall: { name: 'subagent', arguments: { description: 'check the numbers', prompt: 'FAIL: check them' } },
      failWhen: (prompt) => prompt.startsWith('FAIL'),
      answer: () => 'Answered without the helper.',
    });
    try {
      const file = await writeConfig(
        config({
          models: [{ id: 'loop', baseURL: delegating.baseURL, models: ['loop-model'], retry: { retries: 0 } }],
          tools: [],
        }),
        'child-fails.json',
      );
      const result = await runCli(['run', '--config', file]);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('Answered without the helper.\n');
      expect(result.stderr).toMatch(/^brood run: 1 of 1 subagents did not complete \(sub_\S+ error\)\n$/);
    } finally {
      await delegating.close();
    }
  });

  it.each([
    ['missing file', null, /cannot read config .*ENOENT/],
    ['invalid JSON', '{ "models": [', /is not valid JSON/],
    ['unknown built-in tool', { tools: ['rm_rf'] }, /tools\[0\]: /],
    ['unknown key', { colour: 'blue' }, /\(root\): .*colour/],
    [
      'agent provider not configured',
      { agent: { model: { provider: 'nope', model: 'm' } } },
      /agent\.model\.provider: 'nope' is not one of/,
    ],
    [
      'unset key variable',
      { models: [{ id: 'loop', baseURL: 'http://127.0.0.1:1/v1', apiKeyEnv: 'BROOD_TEST_UNSET_KEY', models: ['m'] }] },
      /environment variable BROOD_TEST_UNSET_KEY is not set/,
    ],
    [
      'bad delegation instance',
      { delegation: [{ provider: 'spawn', maxDepth: -1 }] },
      /delegation\[0\]\.maxDepth: must be a non-negative safe integer/,
    ],
    ['no prompt', { prompt: undefined }, /prompt: required/],
  ])('bad config (%s) → exit 2, one line', async (_name, value, pattern) => {
    const file =
      value === null
        ? join(workspace, 'missing.json')
        : await writeConfig(typeof value === 'string' ? value : config(value), 'bad.json');
    expectOneLine(
      await runCli(['run', '--config', file], { env: { LOOP_KEY: 'k', BROOD_TEST_UNSET_KEY: undefined } }),
      pattern,
    );
  });
});

describe('help and version', () => {
  const COMMANDS = ['demo', 'run', 'inspect', 'trace', 'acp', 'host', 'mcp'];

  it.each(COMMANDS.map((command, i) => [command, i % 2 === 0 ? '--help' : '-h']))(
    'brood %s %s answers with its usage, exit 0',
    async (command, flag) => {
      const result = await runCli([command, flag]);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(new RegExp(`^Usage: brood ${command}`));
    },
  );

  it.each([[['--version']], [['-v']], ...COMMANDS.map((command, i) => [[command, i % 2 === 0 ? '-v' : '--version']])])(
    'brood %j prints the package version',
    async (args) => {
      const { version } = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8')) as {
        version: string;
      };
      const result = await runCli(args);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(`${version}\n`);
    },
  );

  it('flags after the command still count: brood trace <dir> <id> --help', async () => {
    const result = await runCli(['trace', 'some-dir', 'some-id', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: brood trace/);
  });
});

describe('brood trace: metadata and flows', () => {
  it('metadata events carry cat; each child gets a flow from a parent tool slice to its own first slice', async () => {
    const all = await headers();
    const root = all.find((h) => h.parentSession === undefined)!;
    type Event = {
      ph: string;
      name: string;
      cat?: string;
      pid: number;
      tid: number;
      ts?: number;
      dur?: number;
      id?: number;
      bp?: string;
    };
    const { traceEvents } = JSON.parse((await runCli(['trace', sessionsDir, root.id])).stdout) as {
      traceEvents: Event[];
    };
    expect(traceEvents.filter((e) => e.ph === 'M').every((e) => e.cat === '__metadata')).toBe(true);
    const starts = traceEvents.filter((e) => e.ph === 's');
    const finishes = traceEvents.filter((e) => e.ph === 'f');
    expect(starts).toHaveLength(all.length - 1);
    const spans = traceEvents.filter((e) => e.ph === 'X');
    for (const start of starts) {
      const end = finishes.find((f) => f.id === start.id)!;
      expect(end.bp).toBe('e');
      expect(end.tid).not.toBe(start.tid);
      // The arrow leaves from inside a tool slice on the parent's track and lands on a slice start.
      expect(
        spans.some((s) => s.cat === 'tool' && s.tid === start.tid && s.ts! <= start.ts! && start.ts! <= s.ts! + s.dur!),
      ).toBe(true);
      expect(spans.some((s) => s.tid === end.tid && s.ts === end.ts)).toBe(true);
    }
  });
});
