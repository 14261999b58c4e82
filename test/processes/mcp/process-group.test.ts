/**
 * A stdio server behind a wrapper (`sh -c '<node> server.mjs'`, as npx-style launchers start them)
 * whose real process ignores stdin EOF and SIGTERM: brood ends the server's whole process group, so
 * the disposer and brood.close() resolve and neither the wrapper nor the server is left running.
 * (The killed server was the wrapper's child; init reaps it, so "running" excludes a zombie.)
 * The shutdown's 2 s graces run on a fast clock (helpers.ts): the sequence is the same, shorter. On
 * that clock the pipe-drain wait after SIGKILL is 10 ms, and on a loaded machine the killed server may
 * not have been scheduled to begin exiting by then: once SIGKILL was sent it is gone for certain, so
 * the checks wait for the kernel (until) instead of racing it.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, McpStdioServer } from '../../../src/index.js';
import { createBrood } from '../../../src/index.js';
import { mcpToolsOnClock } from '../../../src/mcp/plugin.js';
import { isRunning } from '../../support/running.js';
import { until } from '../../support/until.js';
import { childProcesses, FAST_CLOCK } from './helpers.js';

const STUBBORN_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'ignoring-signals-server.mjs');

function wrapped(name: string): McpStdioServer {
  return { name, command: 'sh', args: ['-c', `"${process.execPath}" "${STUBBORN_SCRIPT}"`] };
}

let brood: Brood | undefined;
const started: number[] = [];
afterEach(async () => {
  await brood?.close();
  brood = undefined;
  // A failing run must not leave its stubborn server behind for the rest of the suite.
  for (const pid of started.splice(0)) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
});

/** The wrapper (this process's child) and the server (the wrapper's child), both running. */
async function serverPids(brood: Brood, name: string): Promise<{ wrapper: number; server: number }> {
  const result = await brood.tools.execute({ name: `mcp__${name}__pid`, arguments: {} });
  expect(result.isError).toBe(false);
  const server = Number(result.content);
  started.push(server);
  const wrappers = await childProcesses(STUBBORN_SCRIPT);
  expect(wrappers).toHaveLength(1);
  const wrapper = wrappers[0]!;
  started.push(wrapper);
  // Really a grandchild: the shell did not exec the server in its own place.
  expect(server).not.toBe(wrapper);
  expect(isRunning(server)).toBe(true);
  return { wrapper, server };
}

describe('a wrapped stdio server that ignores EOF and SIGTERM', () => {
  it('brood.close() resolves and leaves neither the wrapper nor the server running', async () => {
    brood = createBrood({ runner: 'inline' });
    await brood.use(mcpToolsOnClock(wrapped('stubborn'), {}, FAST_CLOCK));
    const { wrapper, server } = await serverPids(brood, 'stubborn');
    await brood.close();
    brood = undefined;
    await until(() => !isRunning(server) && !isRunning(wrapper));
  });

  it("the use() disposer resolves the same way; the runtime's other server keeps working", async () => {
    brood = createBrood({ runner: 'inline' });
    const dispose = await brood.use(mcpToolsOnClock(wrapped('first'), {}, FAST_CLOCK));
    const first = await serverPids(brood, 'first');
    await dispose();
    await until(() => !isRunning(first.server) && !isRunning(first.wrapper));
    expect(brood.tools.view().names).toEqual([]);
    await brood.use(mcpToolsOnClock(wrapped('second'), {}, FAST_CLOCK));
    const second = await serverPids(brood, 'second');
    expect(second.server).not.toBe(first.server);
  });
});
