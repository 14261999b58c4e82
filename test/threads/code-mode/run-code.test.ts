/**
 * SPEC §4 rule 8, execution: run_code runs model-written JavaScript in a disposable thread started by
 * the agent's worker; tools called from inside go back through the parent resolver as the same agent;
 * limits and errors are errored tool results that keep the logs, never driver faults.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, Brood, BroodOptions, SessionEvent, ToolContext } from '../../../src/index.js';
import { createBrood, defineTool, scriptedModels } from '../../../src/index.js';
import { ofType } from '../../support/events.js';
import { ExecutionCounter } from '../../support/execution-counter.js';
import { route } from '../../support/route.js';
import { tapStore } from '../../support/tap-store.js';
import { expectWellFormed } from '../../support/well-formed.js';

type Scripts = NonNullable<Parameters<typeof scriptedModels>[0]['scripts']>;

const BUSY_MS = 300;
const WALL_MS = 1000;

let brood: Brood | undefined;

afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

/** A script whose first step calls run_code with `code`, then answers with the tool results. */
function codeScript(match: string, code: string): Scripts[number] {
  return {
    match,
    turns: [
      { toolCalls: [{ name: 'run_code', arguments: { description: match, code } }] },
      { text: 'after: {{results}}' },
    ],
  };
}

interface Setup {
  brood: Brood;
  counter: ExecutionCounter;
  contexts: { name: string; ctx: ToolContext }[];
  /** Resolves a pending `wait` tool call. */
  release(): void;
}

function setup(scripts: Scripts, codeMode: NonNullable<BroodOptions['codeMode']> = 'code', wallMs = WALL_MS): Setup {
  const tap = tapStore();
  brood = createBrood({
    sessions: tap.store,
    codeMode,
    models: [scriptedModels({ id: 'scripted', scripts })],
    pool: { threads: 2, hangTimeoutMs: 1500, cancelGraceMs: 300 },
    codeBusyTimeoutMs: BUSY_MS,
    codeWallTimeoutMs: wallMs,
  });
  const counter = new ExecutionCounter();
  const contexts: Setup['contexts'] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const record = (name: string, ctx: ToolContext) => {
    counter.hit(ctx.agent?.id, ctx.callId);
    contexts.push({ name, ctx });
  };
  brood.tools.register(
    defineTool({
      name: 'lookup',
      description: 'doubles n',
      parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      execute: (args: { n: number }, ctx) => {
        record('lookup', ctx);
        return { n: args.n * 2, tags: ['a', 'b'] };
      },
    }),
  );
  brood.tools.register(
    defineTool({
      name: 'greet',
      description: 'greets someone',
      parameters: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },
      execute: async (args: { who: string }, ctx) => {
        record('greet', ctx);
        return `hello ${args.who}`;
      },
    }),
  );
  brood.tools.register(
    defineTool({
      name: 'secret',
      description: 'hidden from the agents below',
      parameters: { type: 'object', properties: {} },
      execute: (_args, ctx) => {
        record('secret', ctx);
        return 'leaked';
      },
    }),
  );
  brood.tools.register(
    defineTool({
      name: 'wait',
      description: 'waits until the test releases it',
      parameters: { type: 'object', properties: {} },
      execute: async (_args, ctx) => {
        record('wait', ctx);
        await released;
        return 'released';
      },
    }),
  );
  return { brood, counter, contexts, release };
}

async function agentOf(b: Brood): Promise<Agent> {
  return b.createAgent({ model: route, toolFilter: { deny: ['secret'] } });
}

interface ToolResultData {
  callId: string;
  name: string;
  isError: boolean;
  content: string;
  errorCode?: string;
}

async function resultsOf(b: Brood, id: string): Promise<{ events: SessionEvent[]; results: ToolResultData[] }> {
  const events = await expectWellFormed(b.sessions, id);
  return { events, results: ofType(events, 'tool/result').map((e) => e.data as unknown as ToolResultData) };
}

describe('run_code programs', () => {
  it('calls tools as the same agent and returns logs, then the return value', async () => {
    const code = [
      "console.log('start', 1, { a: 1 });",
      'const looked = await tools.lookup({ n: 21 });',
      "const greeting = await tools.greet({ who: 'bob' });",
      'console.log(typeof looked, looked.n, typeof greeting, greeting);',
      'return { looked, greeting };',
    ].join('\n');
    const {
      brood: b,
      counter,
      contexts,
    } = setup([codeScript('two tools', code), codeScript('a string', "console.log('x'); return 'plain text';")]);
    const agent = await agentOf(b);
    const turn = await agent.run('two tools please');
    expect(turn.stopReason).toBe('completed');
    const expected = [
      'start 1 { a: 1 }',
      'object 42 string hello bob',
      JSON.stringify({ looked: { n: 42, tags: ['a', 'b'] }, greeting: 'hello bob' }),
    ].join('\n');
    expect(turn.output).toBe(`after: ${expected}`);

    const { events, results } = await resultsOf(b, agent.id);
    expect(results).toEqual([
      { callId: 'call_0_0', name: 'run_code', isError: false, content: expected, at: expect.any(Number) },
    ]);
    // Sub-calls are not model tool calls: only run_code is in the session.
    expect(ofType(events, 'tool/call').map((e) => e.data.name)).toEqual(['run_code']);
    // Each tool ran exactly once, as this agent, with sub-call ids <callId>:code:<n>.
    expect(counter.of(agent.id)).toEqual({ 'call_0_0:code:1': 1, 'call_0_0:code:2': 1 });
    expect(contexts.map(({ name, ctx }) => [name, ctx.callId])).toEqual([
      ['lookup', 'call_0_0:code:1'],
      ['greet', 'call_0_0:code:2'],
    ]);
    for (const { ctx } of contexts) expect(ctx.agent).toBe(agent);

    // A string return value is appended as is (not JSON-quoted).
    const other = await agentOf(b);
    expect((await other.run('a string')).output).toBe('after: x\nplain text');
  });

  it('a tool hidden from the agent is absent from the SDK and rejects inside the program', async () => {
    const code = "console.log('before'); await tools.secret({}); console.log('not reached');";
    const { brood: b, counter } = setup([codeScript('hidden', code)]);
    const agent = await agentOf(b);
    expect(agent.tools.sdk()).not.toContain('secret');
    expect(agent.prompt.assemble().sections.find((s) => s.name === 'tools:sdk')?.text).not.toContain('secret');
    expect((await agent.run('hidden tool')).stopReason).toBe('completed');
    const { results } = await resultsOf(b, agent.id);
    const direct = await agent.tools.execute({ name: 'secret', arguments: {} });
    expect(direct.error?.code).toBe('UNKNOWN_TOOL');
    expect(results).toHaveLength(1);
    expect(results[0]!.isError).toBe(true);
    expect(results[0]!.content.startsWith('Error: ')).toBe(true);
    expect(results[0]!.content).toContain(direct.error!.message);
    expect(results[0]!.content).toContain('before');
    expect(results[0]!.content).not.toContain('not reached');
    expect(counter.of(agent.id)).toEqual({});
  });

  it('a tool error can be caught inside the program', async () => {
    const code =
      "try { await tools.secret({}); } catch (e) { console.log('caught', e instanceof Error); } return 'ok';";
    const { brood: b } = setup([codeScript('catch', code)]);
    const agent = await agentOf(b);
    await agent.run('catch it');
    const { results } = await resultsOf(b, agent.id);
    expect(results[0]).toMatchObject({ isError: false, content: 'caught true\nok' });
  });

  it('a thrown error is an errored result that keeps the logs', async () => {
    const { brood: b } = setup([codeScript('throws', "console.log('step', 1); throw new Error('boom-42');")]);
    const agent = await agentOf(b);
    expect((await agent.run('throws')).stopReason).toBe('completed');
    const { results } = await resultsOf(b, agent.id);
    expect(results[0]!.isError).toBe(true);
    expect(results[0]!.content).toContain('boom-42');
    expect(results[0]!.content).toContain('step 1');
  });

  it('invalid run_code arguments → INVALID_ARGS', async () => {
    const { brood: b } = setup([
      {
        match: 'missing',
        turns: [{ toolCalls: [{ name: 'run_code', arguments: { description: 'no code' } }] }, { text: 'x' }],
      },
      {
        match: 'malformed',
        turns: [{ toolCalls: [{ name: 'run_code', arguments: '{"description": "d", "code": ' }] }, { text: 'x' }],
      },
    ]);
    for (const prompt of ['missing code', 'malformed json']) {
      const agent = await agentOf(b);
      expect((await agent.run(prompt)).stopReason).toBe('completed');
      const { results } = await resultsOf(b, agent.id);
      expect(results).toEqual([
        expect.objectContaining({ name: 'run_code', isError: true, errorCode: 'INVALID_ARGS' }),
      ]);
    }
  });
});

describe('run_code limits', () => {
  for (const [label, spin] of [
    ['a synchronous busy loop', "console.log('spinning'); while (true) {}"],
    [
      'a busy loop after an await',
      "console.log('spinning'); await tools.greet({ who: 'x' }); console.log('now spin'); while (true) {}",
    ],
  ] as const) {
    it(`${label} is stopped by codeBusyTimeoutMs: errored result with the logs, the agent and the host keep working`, async () => {
      const script = codeScript('spin', spin);
      // The agent's next turn continues its script (SPEC §8 script position).
      script.turns.push({ text: 'later answer' });
      // A wall limit far away: only the busy limit can end the spin within the bound below.
      const { brood: b } = setup([script, { match: 'fresh', turns: [{ text: 'fresh answer' }] }], 'code', 60_000);
      const agent = await agentOf(b);
      const started = Date.now();
      const turn = await agent.run('spin please');
      expect(turn.stopReason).toBe('completed');
      expect(Date.now() - started).toBeLessThan(10_000);
      const { results } = await resultsOf(b, agent.id);
      expect(results).toHaveLength(1);
      expect(results[0]!.isError).toBe(true);
      expect(results[0]!.content).toContain('spinning');
      if (spin.includes('now spin')) expect(results[0]!.content).toContain('now spin');
      // The same agent serves a later turn; a new agent works too.
      expect(await agent.run('later')).toMatchObject({ stopReason: 'completed', output: 'later answer' });
      const fresh = await agentOf(b);
      expect(await fresh.run('fresh one')).toMatchObject({ stopReason: 'completed', output: 'fresh answer' });
    });
  }

  it('codeWallTimeoutMs bounds the total time, even while a tool call is in flight', async () => {
    const { brood: b, release } = setup([
      codeScript('wall', "console.log('waiting'); await tools.wait({}); console.log('never');"),
    ]);
    const agent = await agentOf(b);
    const started = Date.now();
    const turn = await agent.run('wall clock');
    release();
    expect(turn.stopReason).toBe('completed');
    expect(Date.now() - started).toBeGreaterThanOrEqual(WALL_MS - 50);
    const { results } = await resultsOf(b, agent.id);
    expect(results[0]!.isError).toBe(true);
    expect(results[0]!.content).toContain('waiting');
    expect(results[0]!.content).not.toContain('never');
  });
});

describe('run_code reachability', () => {
  it("under 'code' a direct model call to another tool fails UNKNOWN_TOOL pointing to run_code; the body never runs", async () => {
    const { brood: b, counter } = setup([
      { match: 'direct', turns: [{ toolCalls: [{ name: 'greet', arguments: { who: 'x' } }] }, { text: 'x' }] },
    ]);
    const agent = await agentOf(b);
    expect((await agent.run('direct call')).stopReason).toBe('completed');
    const { results } = await resultsOf(b, agent.id);
    expect(results).toEqual([expect.objectContaining({ name: 'greet', isError: true, errorCode: 'UNKNOWN_TOOL' })]);
    expect(results[0]!.content).toContain('run_code');
    expect(counter.of(agent.id)).toEqual({});
    // Host calls are not affected by Code Mode.
    expect(await agent.tools.execute({ name: 'greet', arguments: { who: 'host' } })).toMatchObject({
      isError: false,
      content: 'hello host',
    });
  });

  it("agent.tools.execute({ name: 'run_code' }) → UNKNOWN_TOOL under every mode", async () => {
    for (const mode of ['code', 'both', 'native'] as const) {
      const { brood: b } = setup([], mode);
      const agent = await agentOf(b);
      const result = await agent.tools.execute({ name: 'run_code', arguments: { description: 'd', code: 'return 1' } });
      expect(result).toMatchObject({ isError: true, error: { code: 'UNKNOWN_TOOL' } });
      expect(
        (await b.tools.execute({ name: 'run_code', arguments: { description: 'd', code: 'return 1' } })).error?.code,
      ).toBe('UNKNOWN_TOOL');
      await b.close();
      brood = undefined;
    }
  });

  it("run_code called by the model under 'native' → UNKNOWN_TOOL and nothing runs", async () => {
    const { brood: b, counter } = setup(
      [codeScript('native', "await tools.greet({ who: 'x' }); return 'ran';")],
      'native',
    );
    const agent = await agentOf(b);
    expect((await agent.run('native run_code')).stopReason).toBe('completed');
    const { results } = await resultsOf(b, agent.id);
    expect(results).toEqual([expect.objectContaining({ name: 'run_code', isError: true, errorCode: 'UNKNOWN_TOOL' })]);
    expect(counter.of(agent.id)).toEqual({});
  });

  it("under 'both' the model may call tools directly and through run_code", async () => {
    const { brood: b, counter } = setup(
      [
        {
          match: 'mixed',
          turns: [
            { toolCalls: [{ name: 'greet', arguments: { who: 'direct' } }] },
            {
              toolCalls: [
                {
                  name: 'run_code',
                  arguments: { description: 'd', code: "return await tools.greet({ who: 'code' });" },
                },
              ],
            },
            { text: 'x' },
          ],
        },
      ],
      'both',
    );
    const agent = await agentOf(b);
    await agent.run('mixed');
    const { results } = await resultsOf(b, agent.id);
    expect(results.map((r) => [r.name, r.isError, r.content])).toEqual([
      ['greet', false, 'hello direct'],
      ['run_code', false, 'hello code'],
    ]);
    expect(counter.of(agent.id)).toEqual({ call_0_0: 1, 'call_1_0:code:1': 1 });
  });
});
