/**
 * SPEC §14: the built `brood` bin — demo, inspect, trace, run, and exit codes. Each command runs once as
 * a real process (argv, exit code, stdout and stderr wired); further cases of inspect and trace call the
 * command line in process over the demo's sessions. Usage errors, bad configs, help and version for
 * every command: test/unit/cli/command-line.test.ts.
 */
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTime } from '../../../src/cli/inspect.js';
import { expectUsageError, runInProcess } from '../../support/command-line.js';
import { type LoopbackModel, startLoopbackModel } from '../../support/loopback-model.js';
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
    expect(result.stdout).toMatch(
      /^agent\s+label\s+depth\s+mode\s+started\s+stop\s+turns\s+tokens in\/out\s+subtree in\/out\s+duration$/m,
    );
    expect(result.stdout).toMatch(
      /│ {2}└─ sub_\S+\s+verify outliers\s+2\s+one-shot\s+[\d-]+ [\d:]+\s+completed\s+1\s+\d+\/\d+\s+\d/,
    );
    expect(result.stdout).toMatch(/^agent_\S+\s+Research brief.*\s0\s+top-level\s+[\d-]+ [\d:]+\s+completed×\d+/m);
  });

  it('shows when each agent started, in local time to the second', async () => {
    const root = (await headers()).find((h) => h.parentSession === undefined)!;
    const { createdAt } = JSON.parse(
      (await readFile(join(sessionsDir, `${root.id}.jsonl`), 'utf8')).split('\n')[0]!,
    ) as {
      createdAt: number;
    };
    const result = await runInProcess(['inspect', sessionsDir]);
    const rootRow = result.stdout.split('\n').find((line) => line.startsWith(root.id));
    expect(rootRow).toContain(` ${startTime(createdAt)} `);
    expect(startTime(new Date(2026, 0, 2, 3, 4, 5).getTime())).toBe('2026-01-02 03:04:05');
  });

  it('<id> shows only the tree under that session, as a tree of its own', async () => {
    const all = await headers();
    const parent = all.find((h) => h.delegationDepth === 1 && all.some((c) => c.parentSession === h.id))!;
    const result = await runInProcess(['inspect', sessionsDir, parent.id]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`${sessionsDir}: 2 of 6 sessions, the tree of ${parent.id}`);
    const rows = result.stdout.split('\n').filter((line) => /^(└─ )?(sub|agent)_/.test(line));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(new RegExp(`^${parent.id}\\s`));
    expect(rows[1]).toMatch(/^└─ sub_\S+\s+verify outliers\s/);
  });

  it('--last shows only the tree of the root started last; an unknown id or both is a usage error', async () => {
    const two = join(tmp, 'two-runs');
    await cp(sessionsDir, two, { recursive: true });
    expect((await runCli(['demo', '--dir', two])).code).toBe(0);
    const first = (await headers()).find((h) => h.parentSession === undefined)!;
    const all = await runInProcess(['inspect', two]);
    expect(all.stdout).toContain(`${two}: 12 sessions, 2 trees`);
    const last = await runInProcess(['inspect', two, '--last']);
    expect(last.code).toBe(0);
    const roots = last.stdout.split('\n').filter((line) => line.startsWith('agent_'));
    expect(roots).toHaveLength(1);
    expect(roots[0]).not.toContain(first.id);
    expect(last.stdout).toMatch(new RegExp(`: 6 of 12 sessions, the tree of ${roots[0]!.split(' ')[0]}\n`));
    expectUsageError(await runInProcess(['inspect', two, 'sub_nope']), /^brood inspect: no session sub_nope in /);
    expectUsageError(await runInProcess(['inspect', two, first.id, '--last']), /^brood inspect: give <id> or --last/);
  }, 60_000);

  it('--json gives one record per agent with usage, and the subtree totals', async () => {
    const result = await runInProcess(['inspect', sessionsDir, '--json']);
    const nodes = JSON.parse(result.stdout) as {
      depth: number;
      usage: { inputTokens: number };
      subtreeUsage: { inputTokens: number };
      stopReasons: string[];
    }[];
    expect(nodes).toHaveLength(6);
    for (const node of nodes) {
      expect(node.usage.inputTokens).toBeGreaterThan(0);
      expect(node.subtreeUsage.inputTokens).toBeGreaterThanOrEqual(node.usage.inputTokens);
      expect(node.stopReasons.every((r) => r === 'completed')).toBe(true);
    }
    // One tree: its root's subtree is every request of every session.
    const root = nodes.find((node) => node.depth === 0);
    expect(root?.subtreeUsage.inputTokens).toBe(nodes.reduce((sum, node) => sum + node.usage.inputTokens, 0));
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
    const result = await runInProcess(['trace', sessionsDir, root.id]);
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
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      new RegExp(`^wrote ${out} \\(\\d+ agents?\\); open it in https://ui.perfetto.dev\n$`),
    );
    const { traceEvents } = JSON.parse(await readFile(out, 'utf8')) as { traceEvents: Event[] };
    expect(traceEvents.some((e) => e.ph === 'X' && e.cat === 'turn')).toBe(true);
  });

  it('an unknown id: exit 2, one line', async () => {
    expectUsageError(await runInProcess(['trace', sessionsDir, 'nope']), /no session nope/);
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

describe('the bin wires exit codes and streams', () => {
  it('a usage error: exit 2, one line on stderr, nothing on stdout', async () => {
    const result = await runCli(['run', '--config']);
    expectUsageError(result, /^brood run: Option '--config <value>' argument missing/);
    expect(result.stdout).toBe('');
  });

  it('--version on stdout, exit 0', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(await runCli(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it("a command's --help on stdout, exit 0", async () => {
    const result = await runCli(['mcp', '-h']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^Usage: brood mcp/);
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
    pool: { threads: 1 }, // one isolate to boot per run, not one per core
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

  it('a subagent that failed under a lead that completed: exit 0, and stderr says why it failed', async () => {
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
      expect(result.stderr).toMatch(
        /^brood run: 1 of 1 subagents did not complete:\n {2}sub_\S+ "check the numbers" error: .*500.*\n$/,
      );
    } finally {
      await delegating.close();
    }
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
    const { traceEvents } = JSON.parse((await runInProcess(['trace', sessionsDir, root.id])).stdout) as {
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
