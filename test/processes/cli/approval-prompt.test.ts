/**
 * `brood run`'s y/N approval prompt in a real terminal (a PTY from util-linux `script`, 60 columns,
 * the live tree drawn on it), answered by typing: the whole question stays on screen, wrapped inside
 * the terminal's width, while the answer is typed; `y` runs the call and `n` refuses it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoopbackModel, startLoopbackModel } from '../../support/loopback-model.js';
import { assertBuilt, CLI } from '../../support/run-cli.js';

const HAVE_SCRIPT = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
if (!HAVE_SCRIPT)
  console.warn(
    '`script` (util-linux) is not installed: skipping the PTY approval-prompt tests (approval-prompt.test.ts)',
  );

const COLUMNS = 60;
const ERASE_LINE = '\x1b[2K';
const READING_MS = 500;
const GIVE_UP_MS = 20_000;
// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escapes are what is removed
const ESCAPES = /\x1b\[[0-9;?]*[A-Za-z]/g;

describe.skipIf(!HAVE_SCRIPT)('brood run asks y/N in a terminal', () => {
  let model: LoopbackModel;
  let workspace: string;
  let config: string;

  beforeAll(async () => {
    assertBuilt();
    workspace = await mkdtemp(join(tmpdir(), 'brood-prompt-'));
    await writeFile(join(workspace, 'marker-file.txt'), 'x');
    model = await startLoopbackModel({
      toolCall: { name: 'list_dir', arguments: { path: '.' } },
      answer: (listing) => `tool said: ${listing ?? 'nothing'}`,
    });
    config = join(workspace, 'config.json');
    await writeFile(
      config,
      JSON.stringify({
        models: [{ id: 'loop', baseURL: model.baseURL, models: ['loop-model'], retry: { retries: 0 } }],
        agent: { model: { provider: 'loop', model: 'loop-model' } },
        tools: ['list_dir'],
        root: workspace,
        approvals: { ask: ['list_dir'] },
        prompt: 'List the files.',
      }),
    );
  });

  afterAll(async () => {
    await model?.close();
    if (workspace !== undefined) await rm(workspace, { recursive: true, force: true });
  });

  it('typing "y" runs the call, and the question is whole and wrapped inside the terminal while it waits', async () => {
    const run = await answerInTerminal(config, 'y');
    expect(run.code).toBe(0);
    expect(run.screen).toContain('marker-file.txt');
    expect(run.screen).not.toContain('the user said no');
    // Nothing redrew over the question between its last row and the typed answer.
    expect(run.whileAsking).not.toContain(ERASE_LINE);
    const rows = run.question.split('\n');
    expect(rows.length).toBeGreaterThan(1);
    for (const row of rows) expect(row.length).toBeLessThan(COLUMNS);
    expect(rows.join('')).toMatch(/^brood run: allow list_dir \{"path":"\."\} \(agent \S+\)\? \[y\/N\] $/);
  }, 60_000);

  it('Ctrl-C while the question is open cancels the turn, and brood run exits', async () => {
    const run = await answerInTerminal(config, '\x03');
    expect(run.code).toBe(1);
    expect(run.screen).toContain('brood run: agent ended aborted');
  }, 60_000);

  it('typing "n" refuses the call', async () => {
    const run = await answerInTerminal(config, 'n');
    expect(run.code).toBe(0);
    expect(run.screen).toContain('the user said no');
    expect(run.screen).not.toContain('marker-file.txt');
  }, 60_000);
});

interface PromptRun {
  code: number | null;
  /** Everything written to the terminal, escapes removed. */
  screen: string;
  /** The question as written (rows separated by newlines), escapes and carriage returns removed. */
  question: string;
  /** The raw bytes from the end of the question to the echo of the typed answer. */
  whileAsking: string;
}

/**
 * Runs `brood run` in a PTY of COLUMNS columns; once the question ends in `[y/N] `, types `reply` and
 * Enter (a control character alone, e.g. Ctrl-C, is typed without Enter). A run still going after
 * GIVE_UP_MS is killed and rejected: it hangs.
 */
function answerInTerminal(config: string, reply: string): Promise<PromptRun> {
  const command = `stty cols ${COLUMNS} rows 20 && exec ${quote(process.execPath)} ${quote(CLI)} run --config ${quote(config)}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let raw = '';
  let askedAt = -1;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    raw += chunk;
    if (askedAt === -1 && raw.includes('[y/N] ')) {
      askedAt = raw.indexOf('[y/N] ') + '[y/N] '.length;
      // A person reads before typing: long enough for several of the live tree's redraws (every 100 ms).
      const typed = reply < ' ' ? reply : `${reply}\r`;
      setTimeout(() => child.stdin.write(typed), READING_MS);
    }
  });
  return new Promise((resolve, reject) => {
    const hung = setTimeout(() => child.kill('SIGKILL'), GIVE_UP_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(hung);
      child.stdin.end();
      if (code === null)
        return reject(new Error(`brood run did not end in ${GIVE_UP_MS} ms:\n${raw.replace(ESCAPES, '')}`));
      if (askedAt === -1) return reject(new Error(`brood run never asked:\n${raw.replace(ESCAPES, '')}`));
      const start = raw.lastIndexOf(ERASE_LINE, askedAt);
      const question = raw.slice(start === -1 ? 0 : start + ERASE_LINE.length, askedAt);
      resolve({
        code,
        screen: raw.replace(ESCAPES, ''),
        question: question.replace(ESCAPES, '').replace(/\r/g, '').replace(/^\n+/, ''),
        whileAsking: raw.slice(askedAt, raw.indexOf(reply, askedAt)),
      });
    });
  });
}

function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
