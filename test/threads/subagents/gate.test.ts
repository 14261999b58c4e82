/** SPEC §9 start() checks 1–3: NO_PROVIDER, capability order, maxDepth domain; rejections create and emit nothing. */
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, SubagentCapabilities, SubagentProvider, SubagentStartRequest } from '../../../src/index.js';
import { BroodError } from '../../../src/index.js';
import { route } from '../../support/route.js';
import { type Harness, harness } from './helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.brood.close();
  h = undefined;
});

const NONE: SubagentCapabilities = {
  persona: false,
  toolFilter: false,
  depthLimit: false,
  agentOptions: false,
  outputSchema: false,
};

/**
 * An out-of-process style provider: it never uses ctx.createChild, returns its own SubagentRun, and
 * advertises only what it enforces itself (here: optionally depthLimit, which it checks on its side).
 */
function remoteProvider(name: string, capabilities: Partial<SubagentCapabilities> = {}) {
  const calls: SubagentStartRequest[] = [];
  const provider: SubagentProvider = {
    name,
    capabilities: { ...NONE, ...capabilities },
    inheritsParentContext: false,
    async start(request) {
      calls.push(request);
      if (request.maxDepth !== undefined && request.maxDepth < 1) {
        return {
          id: `${name}-refused`,
          result: Promise.resolve({
            output: '',
            stopReason: 'error',
            diagnostic: 'remote depth cap',
            usage: { inputTokens: 0, outputTokens: 0 },
          }),
          dispose: async () => {},
        };
      }
      return {
        id: `${name}-${calls.length}`,
        result: Promise.resolve({
          output: `remote: ${request.prompt}`,
          stopReason: 'completed',
          usage: { inputTokens: 1, outputTokens: 2 },
        }),
        dispose: async () => {},
      };
    },
  };
  return { provider, calls };
}

async function rejection(promise: Promise<unknown>): Promise<BroodError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(BroodError);
    return error as BroodError;
  }
  throw new Error('expected a rejection');
}

const ALL_FIELDS = {
  outputSchema: { type: 'object', properties: {} },
  maxDepth: 3,
  toolFilter: { deny: [] },
  persona: 'p',
  agentOptions: { maxTokens: 10 },
} as const;

describe('the start() gate', () => {
  let parent: Agent;
  const setup = async () => {
    h = harness({ scripts: [{ match: 'child', turns: [{ text: 'ok' }] }] });
    parent = await h.brood.createAgent({ model: route });
    return h.brood.sessions.list();
  };
  const req = (extra: Record<string, unknown>): SubagentStartRequest =>
    ({ parent, prompt: 'child', signal: new AbortController().signal, ...extra }) as SubagentStartRequest;

  it('an all-false provider runs a bare request and its own SubagentRun comes back', async () => {
    await setup();
    const { provider, calls } = remoteProvider('remote');
    h!.brood.subagents.register(provider);
    const run = await h!.brood.subagents.start('remote', req({}));
    expect(run.id).toBe('remote-1');
    expect(await run.result).toMatchObject({ stopReason: 'completed', output: 'remote: child' });
    expect(calls).toHaveLength(1);
  });

  it('reports the FIRST missing capability in SPEC order with details.capability', async () => {
    const before = await setup();
    const { provider, calls } = remoteProvider('remote');
    h!.brood.subagents.register(provider);
    const order = ['outputSchema', 'maxDepth', 'toolFilter', 'persona', 'agentOptions'] as const;
    const flag = {
      outputSchema: 'outputSchema',
      maxDepth: 'depthLimit',
      toolFilter: 'toolFilter',
      persona: 'persona',
      agentOptions: 'agentOptions',
    } as const;
    for (let i = 0; i < order.length; i++) {
      const fields = Object.fromEntries(order.slice(i).map((key) => [key, ALL_FIELDS[key]]));
      const error = await rejection(h!.brood.subagents.start('remote', req(fields)));
      expect(error.code).toBe('UNSUPPORTED_CAPABILITY');
      expect(error.details?.capability).toBe(flag[order[i]!]);
      expect(error.message).toContain('remote');
      expect(error.message).toContain(flag[order[i]!]);
    }
    // The same through startContinuable.
    const cont = await rejection(
      h!.brood.subagents.startContinuable({
        provider: 'remote',
        label: 'l',
        signal: new AbortController().signal,
        request: { parent, prompt: 'child', persona: 'x', agentOptions: {} },
      }),
    );
    expect(cont.code).toBe('UNSUPPORTED_CAPABILITY');
    expect(cont.details?.capability).toBe('persona');
    expect(calls).toHaveLength(0);
    expect(h!.starts).toHaveLength(0);
    expect(await h!.brood.sessions.list()).toEqual(before);
  });

  it('advertising a capability lets that field through to the provider, which enforces it itself', async () => {
    await setup();
    const { provider, calls } = remoteProvider('remote', { depthLimit: true });
    h!.brood.subagents.register(provider);
    const run = await h!.brood.subagents.start('remote', req({ maxDepth: 0 }));
    expect(await run.result).toMatchObject({ stopReason: 'error', diagnostic: 'remote depth cap' });
    expect(calls[0]?.maxDepth).toBe(0);
    const error = await rejection(h!.brood.subagents.start('remote', req({ maxDepth: 2, persona: 'p' })));
    expect(error.details?.capability).toBe('persona');
  });

  it('empty values count as requests', async () => {
    await setup();
    h!.brood.subagents.register(remoteProvider('remote').provider);
    const cases: [Record<string, unknown>, string][] = [
      [{ persona: '' }, 'persona'],
      [{ toolFilter: { allow: [] } }, 'toolFilter'],
      [{ toolFilter: {} }, 'toolFilter'],
      [{ agentOptions: {} }, 'agentOptions'],
      [{ outputSchema: {} }, 'outputSchema'],
      [{ maxDepth: 0 }, 'depthLimit'],
    ];
    for (const [fields, capability] of cases) {
      const error = await rejection(h!.brood.subagents.start('remote', req(fields)));
      expect([error.code, error.details?.capability]).toEqual(['UNSUPPORTED_CAPABILITY', capability]);
    }
  });

  it('NO_PROVIDER comes first of all', async () => {
    const before = await setup();
    const all = { ...ALL_FIELDS, maxDepth: -1 };
    expect((await rejection(h!.brood.subagents.start('nope', req(all)))).code).toBe('NO_PROVIDER');
    const cont = await rejection(
      h!.brood.subagents.startContinuable({
        provider: 'nope',
        label: 'l',
        signal: new AbortController().signal,
        request: { parent, prompt: 'c', maxDepth: NaN },
      }),
    );
    expect(cont.code).toBe('NO_PROVIDER');
    // A capability failure comes before the maxDepth domain check.
    h!.brood.subagents.register(remoteProvider('remote').provider);
    expect((await rejection(h!.brood.subagents.start('remote', req({ maxDepth: -1 })))).code).toBe(
      'UNSUPPORTED_CAPABILITY',
    );
    expect(h!.starts).toHaveLength(0);
    expect(await h!.brood.sessions.list()).toEqual(before);
  });

  it('every invalid maxDepth → INVALID_MAX_DEPTH; no events, no sessions', async () => {
    const before = await setup();
    const { provider, calls } = remoteProvider('remote', { depthLimit: true });
    h!.brood.subagents.register(provider);
    const invalid: unknown[] = [-1, 1.5, -0, NaN, Infinity, -Infinity, 2 ** 53, '3', null];
    for (const maxDepth of invalid) {
      for (const name of ['spawn', 'fork', 'remote']) {
        const error = await rejection(h!.brood.subagents.start(name, req({ maxDepth })));
        expect([name, String(maxDepth), error.code]).toEqual([name, String(maxDepth), 'INVALID_MAX_DEPTH']);
      }
      const cont = await rejection(
        h!.brood.subagents.startContinuable({
          provider: 'spawn',
          label: 'l',
          signal: new AbortController().signal,
          request: { parent, prompt: 'c', maxDepth: maxDepth as number },
        }),
      );
      expect(cont.code).toBe('INVALID_MAX_DEPTH');
    }
    expect(calls).toHaveLength(0);
    expect(h!.starts).toHaveLength(0);
    expect(h!.ends).toHaveLength(0);
    expect(await h!.brood.sessions.list()).toEqual(before);
    // Valid edge values pass the gate: 0 (then DEPTH_EXCEEDED for a depth-1 child) and 2**53 - 1.
    expect((await rejection(h!.brood.subagents.start('spawn', req({ maxDepth: 0 })))).code).toBe('DEPTH_EXCEEDED');
    const run = await h!.brood.subagents.start('spawn', req({ maxDepth: 2 ** 53 - 1 }));
    expect((await run.result).stopReason).toBe('completed');
    await run.dispose();
  });

  it('a provider without prepareContinuable → UNSUPPORTED_CAPABILITY naming continuable', async () => {
    const before = await setup();
    h!.brood.subagents.register(remoteProvider('remote').provider);
    const error = await rejection(
      h!.brood.subagents.startContinuable({
        provider: 'remote',
        label: 'l',
        signal: new AbortController().signal,
        request: { parent, prompt: 'c' },
      }),
    );
    expect([error.code, error.details?.capability]).toEqual(['UNSUPPORTED_CAPABILITY', 'continuable']);
    expect(await h!.brood.sessions.list()).toEqual(before);
    expect(h!.starts).toHaveLength(0);
  });
});
