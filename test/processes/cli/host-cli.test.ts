/** `brood host` flags: help, and bad flags as one line with exit code 2 (no Redis needed). */
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/run-cli.js';

describe('brood host flags', () => {
  it('answers --help with its usage, exit 0', async () => {
    const result = await runCli(['host', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: brood host --redis <url>/);
  });

  it.each([
    [[], '--redis'],
    [['--redis', 'http://127.0.0.1:6379'], '--redis'],
    [['--redis', 'redis://127.0.0.1:1', '--threads', '0'], '--threads'],
    [['--redis', 'redis://127.0.0.1:1', '--concurrency', 'many'], '--concurrency'],
    [['--redis', 'redis://127.0.0.1:1', '--queue', 'a:b'], '--queue'],
    [['--redis', 'redis://127.0.0.1:1', '--config', '/nonexistent/brood-host.json'], '--config'],
  ])('refuses %j with one line naming %s, exit 2', async (args, flag) => {
    const result = await runCli(['host', ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(flag);
  });
});
