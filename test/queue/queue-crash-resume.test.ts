/**
 * Crash resume with the queue runner (docs/scale-out.md "What is guaranteed"): the 3-level tree of
 * fixtures/resume-tree.mjs on fileSessions, every driver on two real `brood host` processes through a
 * real Redis, its model a loopback server here (outside every killed process) counting each request.
 * - The parent SIGKILLed at seeded points: a new parent's `recover()` re-places the interrupted
 *   activations on the hosts and finishes every turn; no answered request is sent again; no
 *   non-idempotent call runs twice; the answer equals the uninterrupted run's wherever no call's
 *   outcome was unknown.
 * - A host still running a pre-crash activation keeps sending after the new parent took over: what
 *   it sends goes to the dead parent's endpoint and never reaches the store.
 * - A host SIGKILLed at seeded points: the live parent re-places its activations; tool bodies run in
 *   the parent, so no outcome is unknown and the answer is always the uninterrupted run's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/index.js';
import { killPoint } from '../support/crash-fixture.js';
import { ofType } from '../support/events.js';
import { answeredKeys, effects, ModelServer, namespaceOf, readAll, rootOutput } from '../support/resume-tree.js';
import { until } from '../support/until.js';
import { type HostProcess, RedisServer, redisAvailable, startHost, stopHost } from './redis-harness.js';
import { type Fixture, runFixture } from './resume-tree.js';

const QUEUE = 'resume';
const PARENT_SEEDS = 20;
const HOST_SEEDS = 6;
const PARALLEL = 2;

describe.runIf(redisAvailable())('queue runner crash resume', () => {
  let redis: RedisServer;
  let models: ModelServer;
  let hosts: HostProcess[] = [];
  let base: string;
  let fullLines = 0;
  let fullOutput: string | undefined;

  const fixture = (name: string, activationTimeoutMs = 2_000): Fixture => ({
    dir: join(base, name),
    models,
    redisURL: redis.url,
    queue: QUEUE,
    activationTimeoutMs,
  });
  const startHosts = async (count: number): Promise<HostProcess[]> =>
    Promise.all(Array.from({ length: count }, () => startHost(redis.url, ['--queue', QUEUE, '--concurrency', '64'])));

  beforeAll(async () => {
    [redis, models] = await Promise.all([RedisServer.start(), ModelServer.start()]);
    hosts = await startHosts(2);
    base = mkdtempSync(join(tmpdir(), 'brood-queue-resume-'));
    const full = runFixture('run', fixture('full'));
    expect(await full.exited).toEqual({ killed: false });
    expect(full.lines.at(-1)).toBe('done');
    fullLines = full.lines.length;
    fullOutput = rootOutput(await readAll(join(base, 'full')));
    expect(fullOutput).toContain('root: build =>');
  }, 60_000);
  afterAll(async () => {
    await Promise.all(hosts.map((host) => stopHost(host)));
    await Promise.all([redis?.dispose(), models?.close()]);
    if (base) rmSync(base, { recursive: true, force: true });
  });

  /** What a recovery must leave: every turn ended, the root's completed, each charge run once. */
  function expectFinished(after: Map<string, SessionEvent[]>, dir: string, label: string): boolean {
    for (const [id, events] of after)
      expect(ofType(events, 'turn/end').length, `${label} ${id}`).toBe(ofType(events, 'turn/start').length);
    const accepted = ofType(after.get('root') ?? [], 'user/message').length > 0;
    if (accepted) expect(ofType(after.get('root') ?? [], 'turn/end').at(-1)?.data.reason, label).toBe('completed');
    const charges = effects(dir).filter((line) => line.startsWith('charge '));
    expect(new Set(charges).size, label).toBe(charges.length);
    return accepted;
  }

  function unknownOutcome(after: Map<string, SessionEvent[]>): boolean {
    return [...after.values()].some((events) =>
      ofType(events, 'tool/result').some((e) => String(e.data.content).includes('TOOL_OUTCOME_UNKNOWN')),
    );
  }

  it(`the parent killed at ${PARENT_SEEDS} seeded points: a new parent's recover() finishes the tree on the hosts, nothing answered asked again, no side effect twice`, async () => {
    const outcomes: string[] = [];
    const check = async (seed: number): Promise<void> => {
      const at = fixture(`parent-${seed}`);
      const point = killPoint(seed, fullLines - 2);
      const killed = runFixture('run', at, (count, run) => count === point && run.child.kill('SIGKILL'));
      expect(await killed.exited).toEqual({ killed: true });
      const answered = answeredKeys(await readAll(at.dir), namespaceOf(at.dir));
      const sentAtKill = new Map(answered.map((key) => [key, models.sent.get(key) ?? 0]));
      const recovery = runFixture('recover', at);
      expect(await recovery.exited).toEqual({ killed: false });
      expect(recovery.lines.at(-1), `seed ${seed}`).toBe('done');
      expect(recovery.lines).toContain('again 0');
      const after = await readAll(at.dir);
      const accepted = expectFinished(after, at.dir, `seed ${seed}`);
      // Nothing answered is asked again (each key counted across every process; the server is here).
      for (const [key, count] of sentAtKill) expect(models.sent.get(key), `seed ${seed} ${key}`).toBe(count);
      const unknown = unknownOutcome(after);
      if (accepted && !unknown) expect(rootOutput(after), `seed ${seed}`).toBe(fullOutput);
      outcomes.push(!accepted ? 'not accepted' : unknown ? 'unknown' : 'equal');
    };
    const seeds = Array.from({ length: PARENT_SEEDS }, (_, i) => i + 1);
    for (let i = 0; i < seeds.length; i += PARALLEL) await Promise.all(seeds.slice(i, i + PARALLEL).map(check));
    expect(outcomes).toHaveLength(PARENT_SEEDS);
    expect(outcomes).toContain('equal');
    expect(outcomes).toContain('unknown');
  }, 300_000);

  it('a host still finishing a pre-crash activation keeps sending: nothing it sends reaches the resumed session', async () => {
    // A long timeout: the old host must still run the leaf when the new parent has re-placed it.
    const at = fixture('pre-crash-host', 60_000);
    const ns = namespaceOf(at.dir);
    // The leaf's first request is held: its driver (on a host) is mid-request when the parent dies.
    const leaf = models.hold(`${ns} leaf mid a#0`);
    // The resumed root's last request is held too, so the new parent is live while the old host sends.
    const rootLast = models.hold(`${ns} root: build#1`);
    const killed = runFixture('run', at);
    await leaf.arrived;
    killed.child.kill('SIGKILL');
    expect(await killed.exited).toEqual({ killed: true });
    const recovery = runFixture('recover', at);
    // The new parent re-placed the leaf and asked its request again; the old host now gets its answer
    // (call ids `zombie…`) and forwards it, with the events of its turn, to the dead parent.
    await leaf.askedAgain;
    leaf.release();
    const { Redis } = await import('ioredis');
    const probe = new Redis(redis.url);
    const staleInRedis = async (): Promise<boolean> => {
      for (const key of await probe.keys(`brood:${QUEUE}:channel:*`))
        if ((await probe.type(key)) === 'list' && (await probe.lrange(key, 0, -1)).some((b) => b.includes('zombie')))
          return true;
      return false;
    };
    const staleInStore = async (): Promise<boolean> =>
      JSON.stringify([...(await readAll(at.dir)).values()]).includes('zombie');
    try {
      // Until it was sent: it waits, unread, on the dead parent's list (or, were it read, it is in the store).
      await until(async () => (await staleInRedis()) || (await staleInStore()));
    } finally {
      probe.disconnect();
    }
    rootLast.release();
    expect(await recovery.exited).toEqual({ killed: false });
    expect(recovery.lines.at(-1)).toBe('done');
    const after = await readAll(at.dir);
    expectFinished(after, at.dir, 'pre-crash host');
    expect(JSON.stringify([...after.values()])).not.toContain('zombie');
    // The leaf's answer in the resumed session is the new parent's (the one asked again).
    expect(rootOutput(after)).toContain('leaf mid a => charge leaf mid a | upsert leaf mid a');
  }, 60_000);

  it(`a host killed at ${HOST_SEEDS} seeded points: its activations are re-placed, every turn finishes, nothing answered asked again, nothing run twice`, async () => {
    let replaced = 0;
    for (let seed = 1; seed <= HOST_SEEDS; seed++) {
      const at = fixture(`host-${seed}`);
      const victim = hosts[seed % 2] as HostProcess;
      const point = killPoint(seed + 100, fullLines - 2);
      let atKill: Promise<Map<string, number>> | undefined;
      const run = runFixture('run', at, (count) => {
        if (count !== point) return;
        victim.child.kill('SIGKILL');
        atKill = victim.exited.then(async () => {
          const answered = answeredKeys(await readAll(at.dir), namespaceOf(at.dir));
          return new Map(answered.map((key) => [key, models.sent.get(key) ?? 0]));
        });
      });
      expect(await run.exited).toEqual({ killed: false });
      expect(run.lines.at(-1), `seed ${seed}`).toBe('done');
      const sentAtKill = await (atKill as Promise<Map<string, number>>);
      const after = await readAll(at.dir);
      expect(expectFinished(after, at.dir, `seed ${seed}`)).toBe(true);
      for (const [key, count] of sentAtKill) expect(models.sent.get(key), `seed ${seed} ${key}`).toBe(count);
      // Tool bodies run in the parent, which lived: every call has a known outcome.
      expect(unknownOutcome(after), `seed ${seed}`).toBe(false);
      expect(rootOutput(after), `seed ${seed}`).toBe(fullOutput);
      // A conversation the victim was running and another host finished: its activation was re-placed.
      for (const events of after.values()) {
        const pids = ofType(events, 'model/request').map((e) => (e.data.host as { pid: number }).pid);
        if (pids.includes(victim.child.pid as number) && pids.at(-1) !== victim.child.pid) replaced++;
      }
      hosts[seed % 2] = (await startHosts(1))[0] as HostProcess;
    }
    expect(replaced).toBeGreaterThan(0);
  }, 300_000);
});
