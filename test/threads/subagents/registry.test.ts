/** SPEC §9 provider registry: register/list/get, disposers, duplicates, validation, events, contained listeners. */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, SubagentProvider } from '../../../src/index.js';
import { spawnProvider } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { route } from '../../support/route.js';
import { harness, startChild } from './helpers.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

function outOfProcess(name: string): SubagentProvider {
  return {
    name,
    capabilities: { persona: false, toolFilter: false, depthLimit: false, agentOptions: false, outputSchema: false },
    inheritsParentContext: false,
    start: async () => ({
      id: `${name}-run`,
      result: Promise.resolve({
        output: 'remote',
        stopReason: 'completed',
        usage: { inputTokens: 0, outputTokens: 0 },
      }),
      dispose: async () => {},
    }),
  };
}

describe('subagent provider registry', () => {
  it('createBrood registers spawn and fork; register/list/get; the disposer removes, idempotently', () => {
    brood = harness().brood;
    expect(brood.subagents.list()).toEqual(['spawn', 'fork']);
    const remote = outOfProcess('remote');
    const dispose = brood.subagents.register(remote);
    expect(brood.subagents.list()).toEqual(['spawn', 'fork', 'remote']);
    expect(brood.subagents.get('remote')).toBe(remote);
    expect(brood.subagents.get('missing')).toBeUndefined();
    dispose();
    expect(brood.subagents.list()).toEqual(['spawn', 'fork']);
    expect(brood.subagents.get('remote')).toBeUndefined();
    // A second call (and [Symbol.dispose]) must not remove a later registration of the same name.
    const again = outOfProcess('remote');
    brood.subagents.register(again);
    dispose();
    dispose[Symbol.dispose]();
    expect(brood.subagents.get('remote')).toBe(again);
  });

  it('a duplicate name → DUPLICATE_PROVIDER, keeping the first', () => {
    brood = harness().brood;
    const first = outOfProcess('remote');
    brood.subagents.register(first);
    expectCode(() => brood!.subagents.register(outOfProcess('remote')), 'DUPLICATE_PROVIDER');
    expectCode(() => brood!.subagents.register(spawnProvider()), 'DUPLICATE_PROVIDER');
    expect(brood.subagents.get('remote')).toBe(first);
    // Registering a second instance of a built-in under another name works.
    brood.subagents.register(spawnProvider({ name: 'spawn2' }));
    expect(brood.subagents.list()).toContain('spawn2');
  });

  it('malformed providers → INVALID_CONFIG and nothing registered', () => {
    brood = harness().brood;
    const good = outOfProcess('x');
    const malformed: unknown[] = [
      { ...good, name: '' },
      { ...good, name: 'bad name' },
      { ...good, name: 42 },
      { ...good, start: undefined },
      { ...good, capabilities: undefined },
      { ...good, capabilities: { ...good.capabilities, persona: 'yes' } },
      { ...good, capabilities: { persona: true, toolFilter: true, depthLimit: true, agentOptions: true } },
      { ...good, inheritsParentContext: undefined },
    ];
    for (const provider of malformed) {
      expectCode(() => brood!.subagents.register(provider as SubagentProvider), 'INVALID_CONFIG');
    }
    expect(brood.subagents.list()).toEqual(['spawn', 'fork']);
  });

  it('provider-added / provider-removed events fire once per change', () => {
    brood = harness().brood;
    const seen: string[] = [];
    brood.subagents.on('provider-added', (info: { name: string }) => seen.push(`added:${info.name}`));
    brood.subagents.on('provider-removed', (info: { name: string }) => seen.push(`removed:${info.name}`));
    const dispose = brood.subagents.register(outOfProcess('remote'));
    expect(() => brood!.subagents.register(outOfProcess('remote'))).toThrow();
    dispose();
    dispose();
    expect(seen).toEqual(['added:remote', 'removed:remote']);
  });

  it('an on() disposer stops delivery', () => {
    brood = harness().brood;
    const seen: string[] = [];
    const off = brood.subagents.on('provider-added', (info: { name: string }) => seen.push(info.name));
    brood.subagents.register(outOfProcess('a'));
    off();
    brood.subagents.register(outOfProcess('b'));
    expect(seen).toEqual(['a']);
  });

  it('a throwing listener does not break register, start or end delivery', async () => {
    const h = harness({ scripts: [{ match: 'child', turns: [{ text: 'child done' }] }] });
    brood = h.brood;
    for (const event of ['start', 'end', 'provider-added', 'provider-removed'] as const) {
      brood.subagents.on(event, () => {
        throw new Error(`listener for ${event} fails`);
      });
    }
    const later: string[] = [];
    brood.subagents.on('start', (info: { id: string }) => later.push(`start:${info.id}`));
    brood.subagents.on('end', (info: { id: string }) => later.push(`end:${info.id}`));
    brood.subagents.register(outOfProcess('remote'))();
    const parent = await brood.createAgent({ model: route });
    const run = await startChild(h, parent, 'child task');
    const result = await run.result;
    await run.dispose();
    expect(result).toMatchObject({ stopReason: 'completed', output: 'child done' });
    expect(later).toEqual([`start:${run.id}`, `end:${run.id}`]);
    expect(h.order).toEqual([`start:${run.id}`, `end:${run.id}:completed`]);
  });
});
