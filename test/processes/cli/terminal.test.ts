/**
 * The live tree and the streamed answer in one real terminal (a tmux pane), at 3, 8 and 24 rows: after
 * the run, the screen and its scrollback hold the whole answer once, as written, then one final tree —
 * no stale frame, no repeated header, nothing of the answer erased.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoopbackModel, startLoopbackModel } from '../../support/loopback-model.js';
import { assertBuilt, CLI, ROOT } from '../../support/run-cli.js';
import { HAVE_TMUX, runInTerminal, type TerminalRun } from './tmux.js';

if (!HAVE_TMUX)
  console.warn('tmux is not installed: skipping the terminal rendering tests (test/cli/terminal.test.ts)');

const exec = promisify(execFile);
const COLUMNS = 100;
const TREE_HEADER = /^agent\s+label\s+depth\s+state\s+turns\s+tokens in\/out\s+elapsed$/;

/** 30 lines, some wider than the terminal (they wrap), with CJK and emoji (two columns each). */
const ANSWER_LINES = Array.from({ length: 30 }, (_, i) => {
  const words = ['delegation', 'worker', '調査結果', 'threads 🚀', 'resolver', 'sessions'];
  const length = i % 4 === 0 ? 24 : 6;
  return `${i + 1}. ${Array.from({ length }, (_, k) => words[(i + k) % words.length]).join(' ')}`;
});

describe.skipIf(!HAVE_TMUX)('brood run in a terminal', () => {
  let model: LoopbackModel;
  let workspace: string;
  let config: string;

  beforeAll(async () => {
    assertBuilt();
    workspace = await mkdtemp(join(tmpdir(), 'brood-term-'));
    // The lead delegates once; the child's requests fail (HTTP 500, no retry), the lead still answers,
    // streamed a dozen characters at a time while the tree keeps redrawing.
    model = await startLoopbackModel({
      toolCall: { name: 'subagent', arguments: { description: 'check the numbers', prompt: 'FAIL: check them' } },
      failWhen: (prompt) => prompt.startsWith('FAIL'),
      answer: () => ANSWER_LINES.join('\n'),
      pace: { chars: 12, delayMs: 8 },
    });
    config = join(workspace, 'config.json');
    await writeFile(
      config,
      JSON.stringify({
        models: [{ id: 'loop', baseURL: model.baseURL, models: ['loop-model'], retry: { retries: 0 } }],
        agent: { model: { provider: 'loop', model: 'loop-model' } },
        delegation: [{ provider: 'spawn', maxDepth: 1, enableRunInBackground: false }],
        prompt: 'Ask a helper, then answer.',
      }),
    );
  });

  afterAll(async () => {
    await model?.close();
    await rm(workspace, { recursive: true, force: true });
  });

  /** The final tree: the header, the lead (completed) and its child (error), in that order. */
  function expectFinalTree(lines: string[]): void {
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(TREE_HEADER);
    expect(lines[1]).toMatch(/^agent_\S+\s+Ask a helper, then answer\.\s+0\s+completed\s+1\s/);
    expect(lines[2]).toMatch(/^└─ sub_\S+\s+check the numbers\s+1\s+error\s+1\s/);
  }

  /** The closing summary's last two lines: the count, then the failed child and why it failed. */
  function expectFailureLines(lines: string[]): void {
    expect(lines[0]).toBe('brood run: 1 of 1 subagents did not complete:');
    expect(lines[1]).toMatch(/^ {2}sub_\S+ "check the numbers" error: HTTP 500\b/);
  }

  function expectLiveFramesWereDrawn(result: TerminalRun): void {
    // Without this the test would pass for a CLI that never drew a live frame.
    expect(result.raw.split('\x1b[2K').length).toBeGreaterThan(20);
  }

  it.each([3, 8, 24])(
    '%i rows: the whole answer once, then one final tree and the failure lines',
    async (rows) => {
      const result = await runInTerminal([process.execPath, CLI, 'run', '--config', config], {
        columns: COLUMNS,
        rows,
      });
      expect(result.code).toBe(0);
      expect(result.lines.slice(0, ANSWER_LINES.length)).toEqual(ANSWER_LINES);
      expectFinalTree(result.lines.slice(ANSWER_LINES.length, -2));
      expectFailureLines(result.lines.slice(-2));
      expectLiveFramesWereDrawn(result);
    },
    60_000,
  );

  it('stdout to a file: the file holds the answer, the terminal the final tree only', async () => {
    const out = join(workspace, 'answer.txt');
    const result = await runInTerminal(['sh', '-c', `${process.execPath} ${CLI} run --config ${config} > ${out}`], {
      columns: COLUMNS,
      rows: 8,
    });
    expect(result.code).toBe(0);
    expect(await readFile(out, 'utf8')).toBe(`${ANSWER_LINES.join('\n')}\n`);
    expectFinalTree(result.lines.slice(0, -2));
    expectFailureLines(result.lines.slice(-2));
    expectLiveFramesWereDrawn(result);
  }, 60_000);
});

describe.skipIf(!HAVE_TMUX)('brood demo in a terminal', () => {
  let dir: string;

  beforeAll(async () => {
    assertBuilt();
    dir = await mkdtemp(join(tmpdir(), 'brood-term-demo-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([3, 8])(
    '%i rows: one header line, one final tree, no stale frame in scrollback',
    async (rows) => {
      const sessions = join(dir, `s${rows}`);
      const result = await runInTerminal([process.execPath, CLI, 'demo', '--dir', sessions], { columns: 100, rows });
      expect(result.code).toBe(0);
      expect(result.lines[0]).toBe(`brood demo — scripted delegation tree, sessions in ${sessions}`);
      // The final frame is the whole tree: its header, then the six agents, then a blank line.
      expect(result.lines[1]).toMatch(TREE_HEADER);
      expect(result.lines.slice(2, 8).every((line) => /^(agent_|[├└│])/.test(line) && /\scompleted\s/.test(line))).toBe(
        true,
      );
      expect(result.lines[8]).toBe('');
      expect(result.lines.filter((line) => TREE_HEADER.test(line))).toHaveLength(1);
      expect(result.lines.filter((line) => /^\d+ agents?: /.test(line))).toEqual([]);
      expect(result.lines.filter((line) => line.startsWith('Summary ('))).toHaveLength(1);
      // The closing hint runs as printed, from the root of a clone.
      const hint = result.lines.find((line) => line.startsWith('  npx brood inspect '));
      expect(hint).toBe(`  npx brood inspect ${sessions}`);
      const inspect = await exec('sh', ['-c', hint!.trim()], { cwd: ROOT, encoding: 'utf8' });
      expect(inspect.stdout).toContain(`${sessions}: 6 sessions, 1 tree`);
      expect(result.lines.some((line) => line.startsWith(`  npx brood trace ${sessions} agent_`))).toBe(true);
    },
    60_000,
  );
});
