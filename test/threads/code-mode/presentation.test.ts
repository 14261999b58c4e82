/**
 * SPEC §4 rule 8, presentation: the Code Mode setting changes what the model is shown
 * (`model/request.tools`, the `tools:sdk` section), never what is visible (`view()`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, Brood, BroodOptions, CreateAgentOptions, SessionEvent } from '../../../src/index.js';
import { createBrood, defineTool, scriptedModels } from '../../../src/index.js';
import { ofType } from '../../support/events.js';
import { route } from '../../support/route.js';
import { tapStore } from '../../support/tap-store.js';

type Mode = NonNullable<BroodOptions['codeMode']>;

let brood: Brood | undefined;

afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

function setup(codeMode: Mode | undefined) {
  const tap = tapStore();
  brood = createBrood({
    sessions: tap.store,
    models: [scriptedModels({ id: 'scripted' })],
    pool: { threads: 2, hangTimeoutMs: 1500, cancelGraceMs: 300 },
    codeBusyTimeoutMs: 300,
    ...(codeMode === undefined ? {} : { codeMode }),
  });
  const tool = (name: string, description: string) =>
    defineTool({
      name,
      description,
      parameters: { type: 'object', properties: { q: { type: 'string' } } },
      execute: () => name,
    });
  // Registered out of order: the SDK and view() sort by name.
  brood.tools.register(tool('zeta', 'last tool'));
  brood.tools.register(tool('alpha', 'first tool'));
  brood.tools.register(tool('secret', 'filtered away'));
  return { brood, tap };
}

async function newAgent(b: Brood, extra: Partial<CreateAgentOptions> = {}): Promise<Agent> {
  return b.createAgent({ model: route, toolFilter: { deny: ['secret'] }, ...extra });
}

/** Runs one turn (echo fallback) and returns its model/request event. */
async function requestOf(b: Brood, agent: Agent, text = 'hello'): Promise<SessionEvent> {
  expect((await agent.run(text)).stopReason).toBe('completed');
  const requests = ofType((await b.sessions.read(agent.id)).events, 'model/request');
  return requests[requests.length - 1]!;
}

/** Tool names declared by an SDK text (`  name(args: ...): Promise<unknown>;` members). */
function declared(sdk: string): string[] {
  return [...sdk.matchAll(/^ {2}("?[\w$-]+"?)\(args:/gm)].map((m) => m[1]!.replace(/"/g, ''));
}

function sdkSection(agent: Agent): string | undefined {
  return agent.prompt.assemble().sections.find((s) => s.name === 'tools:sdk')?.text;
}

describe("deployment codeMode 'code'", () => {
  it('presents exactly run_code; the tools:sdk section declares exactly the visible tools, sorted, never run_code', async () => {
    const { brood: b } = setup('code');
    const agent = await newAgent(b);
    const request = await requestOf(b, agent);
    expect(request.data.tools).toEqual(['run_code']);
    expect(agent.tools.view().names).toEqual(['alpha', 'zeta']);
    const sdk = sdkSection(agent);
    expect(sdk).toBeDefined();
    expect(declared(sdk!)).toEqual(['alpha', 'zeta']);
    expect(sdk).not.toContain('run_code');
    expect(sdk).not.toContain('secret');
    expect(sdk!.trim()).toBe(agent.tools.sdk().trim());
    // The system prompt actually sent carries the section.
    expect(String(request.data.system)).toContain(sdk!.trim());
  });

  it('orders the tools:sdk section at 150: after a section of order 149, before one of order 151', async () => {
    const { brood: b } = setup('code');
    b.prompt.register({ name: 'before', order: 149, text: 'BEFORE' });
    b.prompt.register({ name: 'after', order: 151, text: 'AFTER' });
    const agent = await newAgent(b);
    const names = agent.prompt.assemble().sections.map((s) => s.name);
    expect(names.filter((n) => ['before', 'tools:sdk', 'after'].includes(n))).toEqual(['before', 'tools:sdk', 'after']);
  });

  it('keeps the SDK text byte-identical across requests while the view is unchanged, and follows a change', async () => {
    const { brood: b } = setup('code');
    const agent = await newAgent(b);
    const first = await requestOf(b, agent, 'one');
    const second = await requestOf(b, agent, 'two');
    expect(second.data.system).toBe(first.data.system);
    expect(agent.tools.sdk()).toBe(agent.tools.sdk());
    const before = sdkSection(agent);
    b.tools.register(
      defineTool({ name: 'middle', description: 'added later', parameters: { type: 'object' }, execute: () => 'm' }),
    );
    expect(declared(sdkSection(agent)!)).toEqual(['alpha', 'middle', 'zeta']);
    expect(sdkSection(agent)).not.toBe(before);
    const third = await requestOf(b, agent, 'three');
    expect(third.data.system).not.toBe(first.data.system);
    expect(third.data.tools).toEqual(['run_code']);
  });
});

describe("deployment codeMode 'both' and 'native'", () => {
  it("'both' presents the visible tools plus run_code, with the SDK section", async () => {
    const { brood: b } = setup('both');
    const agent = await newAgent(b);
    expect((await requestOf(b, agent)).data.tools).toEqual(['alpha', 'zeta', 'run_code']);
    expect(agent.tools.view().names).toEqual(['alpha', 'zeta']);
    expect(declared(sdkSection(agent)!)).toEqual(['alpha', 'zeta']);
  });

  it("'native' (and the default) presents the visible tools, no run_code and no SDK section", async () => {
    for (const mode of ['native', undefined] as const) {
      const { brood: b } = setup(mode);
      const agent = await newAgent(b);
      expect((await requestOf(b, agent)).data.tools).toEqual(['alpha', 'zeta']);
      expect(agent.tools.view().names).toEqual(['alpha', 'zeta']);
      expect(sdkSection(agent)).toBeUndefined();
      await b.close();
      brood = undefined;
    }
  });

  it('view() is the same under every mode', async () => {
    const views: string[][] = [];
    for (const mode of ['native', 'code', 'both'] as const) {
      const { brood: b } = setup(mode);
      const agent = await newAgent(b);
      views.push(agent.tools.view().names);
      expect(agent.tools.view().has('run_code')).toBe(false);
      expect(b.tools.view().names).toEqual(['alpha', 'secret', 'zeta']);
      await b.close();
      brood = undefined;
    }
    expect(views).toEqual([
      ['alpha', 'zeta'],
      ['alpha', 'zeta'],
      ['alpha', 'zeta'],
    ]);
  });
});

describe('agent-level codeMode', () => {
  it('overrides the deployment mode in both directions', async () => {
    const { brood: b } = setup('native');
    const coder = await newAgent(b, { codeMode: 'code' });
    const both = await newAgent(b, { codeMode: 'both' });
    const plain = await newAgent(b);
    expect((await requestOf(b, coder)).data.tools).toEqual(['run_code']);
    expect((await requestOf(b, both)).data.tools).toEqual(['alpha', 'zeta', 'run_code']);
    expect((await requestOf(b, plain)).data.tools).toEqual(['alpha', 'zeta']);
    expect(declared(sdkSection(coder)!)).toEqual(['alpha', 'zeta']);
    expect(sdkSection(plain)).toBeUndefined();
    await b.close();

    const { brood: c } = setup('code');
    const native = await newAgent(c, { codeMode: 'native' });
    expect((await requestOf(c, native)).data.tools).toEqual(['alpha', 'zeta']);
    expect(sdkSection(native)).toBeUndefined();
  });
});

describe('children', () => {
  it("use the deployment's mode, whatever their parent's agent-level mode", async () => {
    for (const [deployment, parentMode, expected] of [
      ['code', 'native', ['run_code']],
      ['native', 'code', ['alpha', 'secret', 'zeta']],
    ] as const) {
      const { brood: b } = setup(deployment);
      const parent = await b.createAgent({ model: route, codeMode: parentMode });
      const run = await b.subagents.start('spawn', {
        parent,
        prompt: 'child task',
        signal: new AbortController().signal,
      });
      expect((await run.result).stopReason).toBe('completed');
      await run.dispose();
      const requests = ofType((await b.sessions.read(run.id)).events, 'model/request');
      expect(requests.map((r) => r.data.tools)).toEqual([expected]);
      expect(String(requests[0]!.data.system).includes('declare const tools')).toBe(deployment === 'code');
      await b.close();
      brood = undefined;
    }
  });
});
