/** SPEC §5.3 persona control and §4.5 live filters, as a child's first (and later) model requests show them. */
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../../src/index.js';
import { defineTool } from '../../../src/index.js';
import { deferred } from '../../support/deferred.js';
import { ofType } from '../../support/events.js';
import { route } from '../../support/route.js';
import { firstRequest, type Harness, harness, startChild } from './helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.brood.close();
  h = undefined;
});

function tool(name: string, runs: string[], body?: () => Promise<void>): ToolDefinition {
  return defineTool({
    name,
    description: `tool ${name}`,
    parameters: { type: 'object', properties: {} },
    execute: async () => {
      runs.push(name);
      await body?.();
      return `${name} ran`;
    },
  });
}

describe('child persona', () => {
  it("omitted inherits the deployment persona; the parent's own persona never reaches it", async () => {
    h = harness({ persona: 'DEPLOY PERSONA for {{agent_id}}', scripts: [{ match: 'child', turns: [{ text: 'ok' }] }] });
    const parent = await h.brood.createAgent({ model: route, persona: 'PARENT PERSONA' });
    const run = await startChild(h, parent, 'child');
    await run.result;
    expect((await firstRequest(h, run.id)).system).toBe(`DEPLOY PERSONA for ${run.id}`);
    await run.dispose();
  });

  it("'' shadows the deployment persona with no persona text", async () => {
    h = harness({ persona: 'DEPLOY PERSONA', scripts: [{ match: 'child', turns: [{ text: 'ok' }] }] });
    h.brood.prompt.register({ name: 'house-rules', text: 'HOUSE RULES' });
    const parent = await h.brood.createAgent({ model: route });
    const run = await startChild(h, parent, 'child', { persona: '' });
    await run.result;
    expect((await firstRequest(h, run.id)).system).toBe('HOUSE RULES');
    await run.dispose();
  });

  it('siblings started together each see only their own persona, templated, from the first request', async () => {
    h = harness({ persona: 'DEPLOY PERSONA', scripts: [{ match: 'child', turns: [{ text: 'ok' }] }] });
    const parent = await h.brood.createAgent({ model: route, persona: 'PARENT PERSONA' });
    const runs = await Promise.all(
      ['A', 'B', 'C'].map((name) =>
        startChild(h!, parent, `child ${name}`, { persona: `SIBLING ${name} at depth {{depth}}` }),
      ),
    );
    await Promise.all(runs.map((run) => run.result));
    const systems = await Promise.all(runs.map(async (run) => (await firstRequest(h!, run.id)).system));
    expect(systems).toEqual(['SIBLING A at depth 1', 'SIBLING B at depth 1', 'SIBLING C at depth 1']);
    for (const run of runs) {
      for (const request of ofType(await h.events(run.id), 'model/request'))
        expect(request.data.system).not.toContain('PERSONA');
    }
    await Promise.all(runs.map((run) => run.dispose()));
    // The parent's view is untouched by its children's personas.
    const parentRun = await parent.run('parent');
    expect(parentRun.stopReason).toBe('completed');
    expect((await firstRequest(h, parent.id)).system).toBe('PARENT PERSONA');
  });

  it('the filtered tool list is what the first model/request presents, and tool-bound guidance follows it', async () => {
    h = harness({ scripts: [{ match: 'child', turns: [{ text: 'ok' }] }] });
    const runs: string[] = [];
    for (const name of ['alpha', 'beta', 'gamma']) h.brood.tools.register(tool(name, runs));
    h.brood.prompt.register({ name: 'gamma-guide', tool: 'gamma', text: 'USE GAMMA WISELY' });
    const parent = await h.brood.createAgent({ model: route, toolFilter: { allow: ['alpha'] } });
    const allow = await startChild(h, parent, 'child allow', { toolFilter: { allow: ['beta', 'gamma'] } });
    const deny = await startChild(h, parent, 'child deny', { toolFilter: { deny: ['gamma'] } });
    const none = await startChild(h, parent, 'child none', { toolFilter: { allow: [] } });
    const plain = await startChild(h, parent, 'child plain');
    await Promise.all([allow, deny, none, plain].map((run) => run.result));
    expect((await firstRequest(h, allow.id)).tools).toEqual(['beta', 'gamma']);
    expect((await firstRequest(h, allow.id)).system).toBe('USE GAMMA WISELY');
    expect((await firstRequest(h, deny.id)).tools).toEqual(['alpha', 'beta']);
    expect((await firstRequest(h, deny.id)).system).toBe('');
    expect((await firstRequest(h, none.id)).tools).toEqual([]);
    // Scopes are flat: the parent's own restriction does not apply to its child.
    expect((await firstRequest(h, plain.id)).tools).toEqual(['alpha', 'beta', 'gamma']);
    await Promise.all([allow, deny, none, plain].map((run) => run.dispose()));
  });

  it('the filter is copied: mutating the request array after start changes nothing', async () => {
    h = harness({
      scripts: [{ match: 'child', turns: [{ toolCalls: [{ name: 'gate', arguments: {} }] }, { text: 'done' }] }],
    });
    const gate = deferred();
    const runs: string[] = [];
    h.brood.tools.register(tool('gate', runs, () => gate.promise));
    h.brood.tools.register(tool('other', runs));
    const parent = await h.brood.createAgent({ model: route });
    const allowList = ['gate'];
    const run = await startChild(h, parent, 'child', { toolFilter: { allow: allowList } });
    allowList.push('other');
    await h.tap.waitFor(run.id, 'tool/call');
    gate.resolve();
    await run.result;
    const requests = ofType(await h.events(run.id), 'model/request').map((e) => e.data.tools);
    expect(requests).toEqual([['gate'], ['gate']]);
    await run.dispose();
  });
});

describe('live filters on a running child', () => {
  const scripts = [
    {
      match: 'live',
      turns: [
        { toolCalls: [{ name: 'gate', arguments: {} }] },
        {
          toolCalls: [
            { name: 'late', arguments: {} },
            { name: 'hidden', arguments: {} },
          ],
        },
        { text: '{{results}}' },
      ],
    },
  ];

  for (const [label, filter, presented, lateRuns] of [
    ['deny-only admits a global registered mid-run', { deny: ['hidden'] }, ['gate', 'late'], true],
    ['allow-only excludes a global registered mid-run', { allow: ['gate'] }, ['gate'], false],
  ] as const) {
    it(label, async () => {
      h = harness({ scripts });
      const gate = deferred();
      const runs: string[] = [];
      h.brood.tools.register(tool('gate', runs, () => gate.promise));
      h.brood.tools.register(tool('hidden', runs));
      const parent = await h.brood.createAgent({ model: route });
      const run = await startChild(h, parent, 'live child', { toolFilter: filter });
      await h.tap.waitFor(run.id, 'tool/call');
      h.brood.tools.register(tool('late', runs));
      gate.resolve();
      const result = await run.result;
      await run.dispose();
      const events = await h.events(run.id);
      const requests = ofType(events, 'model/request').map((e) => e.data.tools);
      expect(requests[0]).toEqual(['gate']);
      expect(requests[1]).toEqual(presented);
      const results = ofType(events, 'tool/result').map((e) => [e.data.name, e.data.isError, e.data.errorCode ?? null]);
      expect(results).toEqual([
        ['gate', false, null],
        ['late', !lateRuns, lateRuns ? null : 'UNKNOWN_TOOL'],
        ['hidden', true, 'UNKNOWN_TOOL'],
      ]);
      // Bodies of hidden tools never ran.
      expect(runs).toEqual(lateRuns ? ['gate', 'late'] : ['gate']);
      expect(result.stopReason).toBe('completed');
    });
  }
});
