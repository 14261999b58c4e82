/**
 * Limits that are accepted are enforced (or refused), model call ids
 * cannot collide with run_code sub-call ids, error formatting never throws, and bad inputs to the
 * entry points are INVALID_CONFIG with one code whatever the store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, BroodOptions } from '../../../src/index.js';
import {
  createBrood,
  defineTool,
  fileSessions,
  memorySessions,
  moduleAdapter,
  scriptedModels,
} from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { collectDiagnostics } from '../../support/diagnostics.js';
import { route } from '../../support/route.js';

const TOO_LONG = 2 ** 31;
let brood: Brood | undefined;
let dir: string | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('millisecond options above 2^31-1 (which Node timers turn into 1 ms) are refused', () => {
  const cases: [string, BroodOptions][] = [
    ['codeBusyTimeoutMs', { codeBusyTimeoutMs: TOO_LONG, pool: { hangTimeoutMs: 2 ** 31 - 1 } }],
    ['codeWallTimeoutMs', { codeWallTimeoutMs: TOO_LONG }],
    ['pool.cancelGraceMs', { pool: { cancelGraceMs: TOO_LONG } }],
    ['pool.hangTimeoutMs', { pool: { hangTimeoutMs: TOO_LONG } }],
    ['pool.idleTimeoutMs', { pool: { idleTimeoutMs: TOO_LONG } }],
  ];
  it.each(cases)('%s', (key, options) => {
    const error = expectCode(() => createBrood({ runner: 'inline', ...options }), 'INVALID_CONFIG');
    expect(error.details?.keys).toContain(key);
  });

  it('the largest timer delay itself is accepted', async () => {
    brood = createBrood({
      runner: 'inline',
      codeWallTimeoutMs: 2 ** 31 - 1,
      pool: { cancelGraceMs: 2 ** 31 - 1, idleTimeoutMs: 2 ** 31 - 1, hangTimeoutMs: 2 ** 31 - 1 },
    });
    expect(await (await brood.createAgent({ model: route })).run('ok')).toMatchObject({ stopReason: 'completed' });
  });

  it('scripted latencyMs / cpuMs too', () => {
    for (const field of ['latencyMs', 'cpuMs']) {
      expectCode(
        () => scriptedModels({ id: 's', scripts: [{ match: 'x', turns: [], [field]: TOO_LONG }] }),
        'INVALID_CONFIG',
      );
    }
  });
});

describe('model call ids and run_code sub-call ids do not share a namespace', () => {
  it('a model call id equal to an earlier sub-call id still runs its own tool, exactly once', async () => {
    const ran: string[] = [];
    brood = createBrood({
      codeMode: 'both',
      models: [
        moduleAdapter({
          id: 'ids',
          models: ['m'],
          moduleUrl: new URL('./fixtures/chosen-ids-adapter.mjs', import.meta.url),
        }),
      ],
      pool: { threads: 1 },
    });
    for (const name of ['alpha', 'beta']) {
      brood.tools.register(
        defineTool({
          name,
          description: name,
          parameters: { type: 'object', properties: {} },
          execute: (_args, ctx) => {
            ran.push(`${name}@${ctx.callId}`);
            return name;
          },
        }),
      );
    }
    const agent = await brood.createAgent({ model: { provider: 'ids', model: 'm' } });
    const result = await agent.run('go');
    expect(ran).toEqual(['alpha@c1:code:1', 'beta@c1:code:1']);
    expect(result.output).toBe('run_code=alpha | beta=beta');
  });
});

describe('error formatting never throws', () => {
  const hostile = {
    'a throwing message getter': () =>
      Object.defineProperty(new Error('x'), 'message', {
        get: () => {
          throw new Error('getter');
        },
      }),
    'a throwing toString and toJSON': () => ({
      toString: () => {
        throw new Error('toString');
      },
      toJSON: () => {
        throw new Error('toJSON');
      },
    }),
    'a throwing code getter': () =>
      Object.defineProperty(new Error('coded'), 'code', {
        get: () => {
          throw new Error('code');
        },
      }),
    'a revoked proxy': () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    },
  };
  it.each(Object.keys(hostile))(
    'tools.execute() resolves an errored result for a tool that throws %s',
    async (kind) => {
      const reported = collectDiagnostics();
      brood = createBrood({ runner: 'inline', onDiagnostic: reported.onDiagnostic });
      brood.tools.register(
        defineTool({
          name: 'bad',
          description: 'bad',
          parameters: { type: 'object', properties: {} },
          execute: () => {
            throw hostile[kind as keyof typeof hostile]();
          },
        }),
      );
      const result = await brood.tools.execute({ name: 'bad', arguments: '{}' });
      expect(result.isError).toBe(true);
      expect(typeof result.content).toBe('string');
      expect(typeof result.error?.message).toBe('string');
      // Reporting the throw to the host never throws either: one report, naming the tool (a revoked
      // proxy too, whose `instanceof` throws).
      expect(result.error?.code).toBeUndefined();
      expect(reported.messages).toEqual([expect.stringContaining('tool "bad" threw')]);
    },
  );

  it('on the model path the turn completes and the model sees an errored tool result (no "Unserializable return value")', async () => {
    const reported = collectDiagnostics();
    brood = createBrood({
      onDiagnostic: reported.onDiagnostic,
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            { match: 'go', turns: [{ toolCalls: [{ name: 'bad', arguments: {} }] }, { text: 'saw {{results}}' }] },
          ],
        }),
      ],
      pool: { threads: 1 },
    });
    brood.tools.register(
      defineTool({
        name: 'bad',
        description: 'bad',
        parameters: { type: 'object', properties: {} },
        execute: () => {
          throw hostile['a throwing message getter']();
        },
      }),
    );
    const agent = await brood.createAgent({ model: route });
    const result = await agent.run('go');
    expect(result.stopReason).toBe('completed');
    expect(result.output).not.toContain('Unserializable');
    const toolResult = (await brood.sessions.read(agent.id)).events.find((event) => event.type === 'tool/result');
    expect(toolResult?.data).toMatchObject({ isError: true });
    expect(reported.messages.length).toBeGreaterThanOrEqual(1);
  });
});

describe('entry points refuse bad input with INVALID_CONFIG', () => {
  it.each([null, 42, [], 'x', true])('createBrood(%j)', (value) => {
    const error = expectCode(() => createBrood(value as never), 'INVALID_CONFIG');
    expect(error.message).toContain('expected an options object');
  });

  it.each([undefined, null, 42, {}, { provider: 'spawn', label: 'x', request: {} }])(
    'subagents.startContinuable(%j)',
    async (spec) => {
      brood = createBrood({ runner: 'inline' });
      await expectCode(brood!.subagents.startContinuable(spec as never), 'INVALID_CONFIG');
    },
  );

  it.each(['memory', 'file'])(
    'resumeAgent of an id that cannot name a session is INVALID_CONFIG (%s sessions)',
    async (kind) => {
      dir = mkdtempSync(join(tmpdir(), 'brood-ids-'));
      brood = createBrood({ runner: 'inline', sessions: kind === 'file' ? fileSessions(dir) : memorySessions() });
      for (const id of ['../x', '..', '.', '', 'a/b', 'x'.repeat(129)]) {
        await expectCode(brood!.resumeAgent(id), 'INVALID_CONFIG');
      }
      await expectCode(brood!.resumeAgent('unknown'), 'NOT_RESUMABLE');
    },
  );

  it.each(['memory', 'file'])('createAgent({ id: ".." }) is INVALID_CONFIG (%s sessions)', async (kind) => {
    dir = mkdtempSync(join(tmpdir(), 'brood-ids-'));
    brood = createBrood({ runner: 'inline', sessions: kind === 'file' ? fileSessions(dir) : memorySessions() });
    await expectCode(brood!.createAgent({ id: '..', model: route }), 'INVALID_CONFIG');
  });

  it('createAgent({ depth: -0 }) is depth 0 everywhere (agent, header, prompt)', async () => {
    brood = createBrood({ runner: 'inline' });
    const agent = await brood.createAgent({ model: route, depth: -0 });
    expect(Object.is(agent.depth, 0)).toBe(true);
    expect(Object.is((await brood.sessions.read(agent.id)).header.delegationDepth, 0)).toBe(true);
  });
});
