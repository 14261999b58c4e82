/**
 * Runs a command in a real terminal — a detached tmux pane of a given size — and returns what a user
 * would see afterwards: the screen and its scrollback (wrapped lines joined), plus the raw bytes the
 * program wrote. Each call gets its own tmux server, its socket in a temporary directory removed
 * afterwards, so parallel test files cannot meet and nothing is left behind.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const HAVE_TMUX = ((): boolean => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

export interface TerminalRun {
  /** Exit code of the command. */
  code: number;
  /** Scrollback then screen, one entry per logical line (wrapped rows joined), trailing spaces and blank lines dropped. */
  lines: string[];
  /** Everything the command wrote to the terminal, escapes included. */
  raw: string;
}

/** `argv` runs with the given environment (plus this process's) in a `columns`×`rows` terminal. */
export async function runInTerminal(
  argv: string[],
  size: { columns: number; rows: number },
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<TerminalRun> {
  const dir = await mkdtemp(join(tmpdir(), 'brood-tmux-'));
  const socket = join(dir, 'socket');
  const conf = join(dir, 'tmux.conf');
  await writeFile(conf, 'set -g status off\nset -g history-limit 100000\n');
  const tmux = (...args: string[]) =>
    run('tmux', ['-S', socket, '-f', conf, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  const exitFile = join(dir, 'exit');
  const rawFile = join(dir, 'raw');
  // The pane stays open after the command so it can be captured; the exit code goes to a file.
  const command = `${argv.map(quote).join(' ')}; echo $? > ${quote(exitFile)}; sleep 600`;
  try {
    await tmux('new-session', '-d', '-s', 'run', '-x', String(size.columns), '-y', String(size.rows), command);
    await tmux('pipe-pane', '-t', 'run', '-o', `cat > ${quote(rawFile)}`);
    const deadline = Date.now() + timeoutMs;
    while (!existsSync(exitFile) || (await readFile(exitFile, 'utf8')).trim() === '') {
      if (Date.now() > deadline) throw new Error(`${argv.join(' ')} did not finish in ${timeoutMs} ms`);
      await sleep(50);
    }
    const { stdout } = await tmux('capture-pane', '-p', '-J', '-S', '-', '-E', '-', '-t', 'run');
    const lines = stdout.split('\n').map((line) => line.trimEnd());
    while (lines.at(-1) === '') lines.pop();
    const code = Number((await readFile(exitFile, 'utf8')).trim());
    return { code, lines, raw: await readFile(rawFile, 'utf8').catch(() => '') };
  } finally {
    await tmux('kill-server').catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

function quote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}
