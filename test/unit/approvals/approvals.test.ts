/**
 * Approvals through the public API, drivers inline: who decides, what waits, what the
 * session records, and what the model reads. Expiry runs on an injected timer (no wall clock).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type Brood,
  type BroodEvent,
  type BroodOptions,
  defineTool,
  memorySessions,
  type ScriptedTurn,
  type SessionStore,
  scriptedModels,
  subagentTool,
} from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { route } from '../../support/route.js';
import { inlineBrood } from '../../support/runtime.js';
import { until } from '../../support/until.js';

let brood: Brood | undefined;
/** Runtimes a test leaves running on purpose (a host that never closed), closed after it. */
const abandoned: Brood[] = [];

afterEach(async () => {
  await brood?.close();
  brood = undefined;
  await Promise.all(abandoned.splice(0).map((b) => b.close()));
});

function calls(...list: [string, unknown][]): ScriptedTurn {
  return { toolCalls: list.map(([name, args]) => ({ name, arguments: args })) };
}

function runtime(
  turns: ScriptedTurn[],
  options: BroodOptions = {},
  extra: { match: string; turns: ScriptedTurn[] }[] = [],
): Brood {
  brood = inlineBrood({
    models: [scriptedModels({ id: 'scripted', scripts: [...extra, { match: 'go', turns }] })],
    ...options,
  });
  return brood;
}

/** A tool that records every run (its arguments) and answers with them. */
/** Parallel-safe, so a parked call is no barrier to its turn's other calls. */
function recorded(name: string, approval?: 'ask' | ((args: { n: number }) => 'allow' | 'deny' | 'ask')) {
  const runs: { n: number }[] = [];
  const tool = defineTool({
    name,
    description: name,
    parameters: z.object({ n: z.number().int().max(100) }),
    concurrencySafe: true,
    execute: (args) => {
      runs.push(args);
      return `${name} ran with ${args.n}`;
    },
    ...(approval === undefined ? {} : { approval }),
  });
  return { tool, runs };
}

function collect(b: Brood): BroodEvent[] {
  const seen: BroodEvent[] = [];
  void (async () => {
    for await (const event of b.events()) seen.push(event);
  })();
  return seen;
}

async function sessionEvents(b: Brood, id: string) {
  return (await b.sessions.read(id)).events;
}

/** Registers the `guarded` tool, which always asks. */
function registerGuarded(b: Brood) {
  const guarded = recorded('guarded', 'ask');
  b.tools.register(guarded.tool);
  return guarded;
}

/** Starts a turn on `b` ("go") and waits until one call of the tree is parked for approval. */
async function runUntilParked(b: Brood) {
  const agent = await b.createAgent({ model: route });
  const turn = agent.run('go');
  await until(() => b.approvals.pending().length === 1);
  return { agent, turn, request: b.approvals.pending()[0]! };
}

describe('a top-level agent', () => {
  it('parks only the call that needs approval; the approved call runs once', async () => {
    const b = runtime([calls(['guarded', { n: 1 }], ['free', { n: 2 }]), { text: 'saw {{results}}' }], {
      maxParallelToolCalls: 4,
    });
    const guarded = recorded('guarded', 'ask');
    const free = recorded('free');
    b.tools.register(guarded.tool);
    b.tools.register(free.tool);
    const seen = collect(b);
    const { agent, turn, request } = await runUntilParked(b);
    // The sibling call ran while the guarded one waits.
    await until(() => free.runs.length === 1);
    expect(guarded.runs).toEqual([]);
    expect(request).toMatchObject({ agentId: agent.id, depth: 0, tool: 'guarded', args: { n: 1 }, viaCode: false });
    expect(b.approvals.pending({ agentId: 'someone-else' })).toEqual([]);
    await b.approvals.respond(request.approvalId, { approve: true });
    const result = await turn;
    expect(result.output).toContain('guarded ran with 1');
    expect(guarded.runs).toEqual([{ n: 1 }]);
    expect(b.approvals.pending()).toEqual([]);
    const types = (await sessionEvents(b, agent.id)).map((event) => event.type);
    expect(types.indexOf('approval/request')).toBeLessThan(types.indexOf('approval/resolved'));
    await until(() => seen.some((event) => event.type === 'approval-resolved'));
    expect(seen.find((event) => event.type === 'approval-request')).toMatchObject({ approvalId: request.approvalId });
    expect(seen.find((event) => event.type === 'approval-resolved')).toMatchObject({
      approvalId: request.approvalId,
      decision: 'approved',
      by: 'host',
    });
    await expectCode(b.approvals.respond(request.approvalId, { approve: true }), 'UNKNOWN_APPROVAL');
  });

  it('a parked call counts as in flight for maxParallelToolCalls', async () => {
    const b = runtime([calls(['guarded', { n: 1 }], ['free', { n: 2 }]), { text: 'saw {{results}}' }], {
      maxParallelToolCalls: 1,
    });
    const guarded = recorded('guarded', 'ask');
    const free = recorded('free');
    b.tools.register(guarded.tool);
    b.tools.register(free.tool);
    const { turn, request } = await runUntilParked(b);
    // The only slot is the parked call's: the next call has not started (and starts once it is answered).
    await new Promise((resolve) => setImmediate(resolve));
    expect(free.runs).toEqual([]);
    await b.approvals.respond(request.approvalId, { approve: true });
    await turn;
    expect(free.runs).toEqual([{ n: 2 }]);
  });

  it('a denied call never runs; the model reads APPROVAL_DENIED with the host message', async () => {
    const b = runtime([calls(['guarded', { n: 1 }]), { text: 'saw {{results}}' }]);
    const guarded = registerGuarded(b);
    const { agent, turn, request } = await runUntilParked(b);
    await b.approvals.respond(request.approvalId, { approve: false, message: 'not on a Friday' });
    expect((await turn).output).toContain('not on a Friday');
    expect(guarded.runs).toEqual([]);
    const result = (await sessionEvents(b, agent.id)).find((event) => event.type === 'tool/result');
    expect(result?.data).toMatchObject({ isError: true, errorCode: 'APPROVAL_DENIED' });
  });

  it('edited args replace the model’s once they pass the schema; bad ones leave the request pending', async () => {
    const b = runtime([calls(['guarded', { n: 1 }]), { text: 'saw {{results}}' }]);
    const guarded = registerGuarded(b);
    const { agent, turn, request } = await runUntilParked(b);
    const { approvalId } = request;
    await expectCode(b.approvals.respond(approvalId, { approve: true, args: { n: 1000 } }), 'INVALID_ARGS');
    expect(b.approvals.pending()).toHaveLength(1);
    await b.approvals.respond(approvalId, { approve: true, args: { n: 7 } });
    expect((await turn).output).toContain('guarded ran with 7');
    expect(guarded.runs).toEqual([{ n: 7 }]);
    const events = await sessionEvents(b, agent.id);
    expect(events.find((event) => event.type === 'approval/request')?.data).toMatchObject({ args: { n: 1 } });
    expect(events.find((event) => event.type === 'approval/resolved')?.data).toMatchObject({ args: { n: 7 } });
  });

  it('respond() refuses unknown ids and malformed decisions', async () => {
    const b = runtime([{ text: 'hi' }]);
    await expectCode(b.approvals.respond('approval_nope', { approve: true }), 'UNKNOWN_APPROVAL');
    await expectCode(b.approvals.respond(42 as unknown as string, { approve: true }), 'UNKNOWN_APPROVAL');
    expectCode(() => b.approvals.pending({ agentId: 3 as unknown as string }), 'INVALID_ARGS');
  });

  it('a response, its args or a filter whose getter throws is INVALID_ARGS, and the request stays pending', async () => {
    const b = runtime([calls(['guarded', { n: 1 }]), { text: 'saw {{results}}' }]);
    const guarded = registerGuarded(b);
    const { turn, request } = await runUntilParked(b);
    const throwing = (fields: object, key: string) =>
      Object.defineProperty(fields, key, {
        enumerable: true,
        get() {
          throw new Error('host getter bug');
        },
      });
    const { approvalId } = request;
    await expectCode(b.approvals.respond(approvalId, throwing({}, 'approve') as never), 'INVALID_ARGS');
    const badArgs = throwing({}, 'n');
    await expectCode(b.approvals.respond(approvalId, { approve: true, args: badArgs }), 'INVALID_ARGS');
    const classArgs = throwing(Object.create({ kind: 'not plain' }) as object, 'n');
    await expectCode(b.approvals.respond(approvalId, { approve: true, args: classArgs }), 'INVALID_ARGS');
    expectCode(() => b.approvals.pending(throwing({}, 'agentId') as never), 'INVALID_ARGS');
    expect(b.approvals.pending()).toHaveLength(1);
    await b.approvals.respond(approvalId, { approve: true });
    await turn;
    expect(guarded.runs).toEqual([{ n: 1 }]);
  });

  it('a request not answered within timeoutMs expires as denied (on the injected timer)', async () => {
    const timers: { fn: () => void; ms: number; cancelled: boolean }[] = [];
    const setTimer = (fn: () => void, ms: number) => {
      const timer = { fn, ms, cancelled: false };
      timers.push(timer);
      return () => {
        timer.cancelled = true;
      };
    };
    const b = runtime([calls(['guarded', { n: 1 }]), { text: 'saw {{results}}' }], {
      approvals: { timeoutMs: 60_000 },
      _internal: { setTimer },
    });
    const guarded = registerGuarded(b);
    const seen = collect(b);
    const { turn, request } = await runUntilParked(b);
    expect(timers.map((timer) => timer.ms)).toEqual([60_000]);
    const { approvalId } = request;
    timers[0]!.fn();
    expect((await turn).output).toContain('not approved in time');
    expect(guarded.runs).toEqual([]);
    await until(() => seen.some((event) => event.type === 'approval-resolved'));
    expect(seen.find((event) => event.type === 'approval-resolved')).toMatchObject({
      decision: 'expired',
      by: 'policy',
    });
    await expectCode(b.approvals.respond(approvalId, { approve: true }), 'UNKNOWN_APPROVAL');
  });

  it('cancelling the turn expires its pending requests', async () => {
    const b = runtime([calls(['guarded', { n: 1 }]), { text: 'unreached' }]);
    const guarded = registerGuarded(b);
    const { agent, turn } = await runUntilParked(b);
    agent.cancel();
    expect((await turn).stopReason).toBe('aborted');
    expect(b.approvals.pending()).toEqual([]);
    const resolved = (await sessionEvents(b, agent.id)).find((event) => event.type === 'approval/resolved');
    expect(resolved?.data).toMatchObject({ decision: 'expired', by: 'policy' });
    expect(guarded.runs).toEqual([]);
  });
});

describe('who decides', () => {
  it('the policy decides calls of tools without their own rule, and sees the call', async () => {
    const seenCalls: unknown[] = [];
    const b = runtime([calls(['plain', { n: 1 }], ['plain', { n: 2 }]), { text: 'saw {{results}}' }], {
      approvals: {
        policy: (call) => {
          seenCalls.push(call);
          return call.args && (call.args as { n: number }).n === 1 ? 'allow' : 'deny';
        },
      },
    });
    const plain = recorded('plain');
    b.tools.register(plain.tool);
    const agent = await b.createAgent({ model: route });
    const result = await agent.run('go');
    expect(plain.runs).toEqual([{ n: 1 }]);
    expect(result.output).toContain('its approval policy refused it');
    expect(seenCalls[0]).toMatchObject({ tool: 'plain', args: { n: 1 }, agentId: agent.id, depth: 0, viaCode: false });
    const resolved = (await sessionEvents(b, agent.id)).filter((event) => event.type === 'approval/resolved');
    expect(resolved.map((event) => event.data)).toMatchObject([{ tool: 'plain', decision: 'denied', by: 'policy' }]);
  });

  it("the tool's own rule wins over the policy; a throwing rule denies", async () => {
    const b = runtime(
      [calls(['own', { n: 1 }], ['own', { n: 2 }], ['broken', { n: 3 }]), { text: 'saw {{results}}' }],
      {
        approvals: { policy: () => 'deny' },
      },
    );
    const own = recorded('own', (args) => (args.n === 1 ? 'allow' : 'deny'));
    const broken = recorded('broken', () => {
      throw new Error('rule bug');
    });
    b.tools.register(own.tool);
    b.tools.register(broken.tool);
    const agent = await b.createAgent({ model: route });
    await agent.run('go');
    expect(own.runs).toEqual([{ n: 1 }]);
    expect(broken.runs).toEqual([]);
  });

  it('a rule that never answers expires after timeoutMs (injected timer); the tool never runs', async () => {
    const timers: { fn: () => void; ms: number }[] = [];
    const setTimer = (fn: () => void, ms: number) => {
      timers.push({ fn, ms });
      return () => undefined;
    };
    const b = runtime([calls(['plain', { n: 1 }]), { text: 'saw {{results}}' }], {
      approvals: { policy: () => new Promise<never>(() => undefined), timeoutMs: 5_000 },
      _internal: { setTimer },
    });
    const plain = recorded('plain');
    b.tools.register(plain.tool);
    const agent = await b.createAgent({ model: route });
    const turn = agent.run('go');
    await until(() => timers.length === 1);
    expect(timers[0]!.ms).toBe(5_000);
    timers[0]!.fn();
    expect((await turn).output).toContain('did not answer in time');
    expect(plain.runs).toEqual([]);
    const events = await sessionEvents(b, agent.id);
    expect(events.find((event) => event.type === 'tool/result')?.data).toMatchObject({
      errorCode: 'APPROVAL_EXPIRED',
    });
    const resolved = events.find((event) => event.type === 'approval/resolved');
    expect(resolved?.data).toMatchObject({ tool: 'plain', decision: 'expired', by: 'policy' });
  });

  it("cancelling the turn ends a tool rule's unanswered wait", async () => {
    const b = runtime([calls(['hangs', { n: 1 }]), { text: 'unreached' }]);
    const hangs = recorded('hangs', () => new Promise<never>(() => undefined) as never);
    b.tools.register(hangs.tool);
    const agent = await b.createAgent({ model: route });
    const turn = agent.run('go');
    await until(async () => (await sessionEvents(b, agent.id)).some((event) => event.type === 'tool/call'));
    agent.cancel();
    expect((await turn).stopReason).toBe('aborted');
    expect(hangs.runs).toEqual([]);
  });

  it('without a rule or a policy calls run as before (no approval events)', async () => {
    const b = runtime([calls(['plain', { n: 1 }]), { text: 'saw {{results}}' }]);
    const plain = recorded('plain');
    b.tools.register(plain.tool);
    const agent = await b.createAgent({ model: route });
    await agent.run('go');
    expect(plain.runs).toEqual([{ n: 1 }]);
    const types = (await sessionEvents(b, agent.id)).map((event) => event.type);
    expect(types.filter((type) => type.startsWith('approval/'))).toEqual([]);
  });

  it('defineTool refuses an approval that is neither ask nor a function', () => {
    expectCode(
      () =>
        defineTool({
          name: 'x',
          description: 'x',
          parameters: z.object({}),
          execute: () => 1,
          approval: 'always' as unknown as 'ask',
        }),
      'INVALID_CONFIG',
    );
  });
});

describe('children', () => {
  const delegate = (prompt: string): ScriptedTurn => calls(['subagent', { description: prompt, prompt }]);

  it("by default a child's call that needs approval is refused without asking", async () => {
    const b = runtime([delegate('child-task'), { text: 'parent saw {{results}}' }], {}, [
      { match: 'child-task', turns: [calls(['guarded', { n: 1 }]), { text: 'child saw {{results}}' }] },
    ]);
    const guarded = registerGuarded(b);
    b.use(subagentTool({ provider: 'spawn' }));
    const agent = await b.createAgent({ model: route });
    const result = await agent.run('go');
    expect(result.output).toContain('children may not ask');
    expect(guarded.runs).toEqual([]);
    expect(b.approvals.pending()).toEqual([]);
  });

  it("children: 'ask' lets depth 1 and depth 2 ask the host; only that call waits", async () => {
    const b = runtime([delegate('level-one'), { text: 'parent saw {{results}}' }], { approvals: { children: 'ask' } }, [
      { match: 'level-one', turns: [delegate('level-two'), { text: 'one saw {{results}}' }] },
      { match: 'level-two', turns: [calls(['guarded', { n: 2 }]), { text: 'two saw {{results}}' }] },
    ]);
    const guarded = registerGuarded(b);
    b.use(subagentTool({ provider: 'spawn' }));
    const { agent, turn, request } = await runUntilParked(b);
    expect(request).toMatchObject({ depth: 2, tool: 'guarded', args: { n: 2 } });
    expect(b.approvals.pending({ agentId: request.agentId })).toHaveLength(1);
    expect(b.approvals.pending({ agentId: agent.id })).toEqual([]);
    await b.approvals.respond(request.approvalId, { approve: true });
    expect((await turn).output).toContain('guarded ran with 2');
    expect(guarded.runs).toEqual([{ n: 2 }]);
  });

  it("a delegation tool's approvals: 'deny' tightens, and a deeper 'ask' cannot loosen it", async () => {
    const b = runtime([delegate('level-one'), { text: 'parent saw {{results}}' }], { approvals: { children: 'ask' } }, [
      {
        match: 'level-one',
        turns: [calls(['loose', { description: 'level-two', prompt: 'level-two' }]), { text: 'one saw {{results}}' }],
      },
      { match: 'level-two', turns: [calls(['guarded', { n: 2 }]), { text: 'two saw {{results}}' }] },
    ]);
    const guarded = registerGuarded(b);
    b.use(subagentTool({ provider: 'spawn', approvals: 'deny' }));
    b.use(subagentTool({ provider: 'spawn', toolName: 'loose', approvals: 'ask' }));
    const agent = await b.createAgent({ model: route });
    const result = await agent.run('go');
    expect(result.output).toContain('children may not ask');
    expect(guarded.runs).toEqual([]);
  });

  it('siblings are not delayed by a sibling waiting for approval', async () => {
    const b = runtime(
      [
        calls(['subagent', { description: 'a', prompt: 'waits' }], ['subagent', { description: 'b', prompt: 'runs' }]),
        { text: 'parent saw {{results}}' },
      ],
      { approvals: { children: 'ask' }, maxParallelToolCalls: 4 },
      [
        { match: 'waits', turns: [calls(['guarded', { n: 1 }]), { text: 'waited' }] },
        { match: 'runs', turns: [calls(['free', { n: 2 }]), { text: 'ran' }] },
      ],
    );
    const guarded = recorded('guarded', 'ask');
    const free = recorded('free');
    b.tools.register(guarded.tool);
    b.tools.register(free.tool);
    b.use(subagentTool({ provider: 'spawn' }));
    const seen = collect(b);
    const { turn, request } = await runUntilParked(b);
    // The other child finishes its whole run while its sibling's call is parked.
    await until(() => seen.filter((event) => event.type === 'subagent-end').length === 1);
    expect(free.runs).toEqual([{ n: 2 }]);
    await b.approvals.respond(request.approvalId, { approve: true });
    await turn;
    expect(guarded.runs).toEqual([{ n: 1 }]);
  });
});

describe('a new runtime on the same sessions', () => {
  /**
   * A host that dies with a request open: its runtime writes to the shared store until `openRequestIn`
   * returns, and nothing after (what a killed process would still have written never lands).
   */
  async function openRequestIn(sessions: SessionStore): Promise<string> {
    let dead = false;
    const hostView: SessionStore = {
      create: (header) => (dead ? Promise.resolve() : sessions.create(header)),
      append: (id, events) => (dead ? Promise.resolve() : sessions.append(id, events)),
      flush: (id) => (dead ? Promise.resolve() : sessions.flush(id)),
      read: (id) => sessions.read(id),
      list: () => sessions.list(),
    };
    const first = inlineBrood({
      sessions: hostView,
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [{ match: 'go', turns: [calls(['guarded', { n: 1 }]), { text: 'x' }] }],
        }),
      ],
    });
    abandoned.push(first);
    first.tools.register(recorded('guarded', 'ask').tool);
    const agent = await first.createAgent({ id: 'orphan', model: route });
    void agent.run('go');
    await until(() => first.approvals.pending().length === 1);
    dead = true;
    return first.approvals.pending()[0]!.approvalId;
  }

  it('lists the open request once the agent is resumed; approved, the tool runs and the agent is told', async () => {
    const sessions = memorySessions();
    const approvalId = await openRequestIn(sessions);
    const b = runtime([{ text: 'hi' }], { sessions });
    const guarded = registerGuarded(b);
    expect(b.approvals.pending()).toEqual([]);
    await b.resumeAgent('orphan');
    expect(b.approvals.pending()).toMatchObject([{ approvalId, agentId: 'orphan', tool: 'guarded', args: { n: 1 } }]);
    await b.approvals.respond(approvalId, { approve: true });
    await until(async () => (await sessionEvents(b, 'orphan')).some((event) => event.type === 'approval/result'));
    expect(guarded.runs).toEqual([{ n: 1 }]);
    const told = (await sessionEvents(b, 'orphan')).find(
      (event) => event.type === 'user/message' && event.data.source === 'approval',
    );
    expect(told?.data).toMatchObject({ delivery: 'quiet' });
  });

  it('disposing the resumed agent expires its listed request: respond() is UNKNOWN_APPROVAL, the tool never runs', async () => {
    const sessions = memorySessions();
    const approvalId = await openRequestIn(sessions);
    const b = runtime([{ text: 'hi' }], { sessions });
    const guarded = registerGuarded(b);
    const orphan = await b.resumeAgent('orphan');
    expect(b.approvals.pending()).toHaveLength(1);
    await orphan.dispose();
    expect(b.approvals.pending()).toEqual([]);
    await expectCode(b.approvals.respond(approvalId, { approve: true }), 'UNKNOWN_APPROVAL');
    expect(guarded.runs).toEqual([]);
    const resolved = (await sessionEvents(b, 'orphan')).filter((event) => event.type === 'approval/resolved');
    expect(resolved.map((event) => event.data)).toMatchObject([{ approvalId, decision: 'expired', by: 'policy' }]);
    // Recorded: a later runtime resuming the agent does not ask again.
    const later = runtime([{ text: 'hi' }], { sessions });
    registerGuarded(later);
    abandoned.push(b);
    await later.resumeAgent('orphan');
    expect(later.approvals.pending()).toEqual([]);
  });

  it('a request whose tool this runtime lacks expires at once', async () => {
    const sessions = memorySessions();
    await openRequestIn(sessions);
    const b = runtime([{ text: 'hi' }], { sessions });
    await b.resumeAgent('orphan');
    expect(b.approvals.pending()).toEqual([]);
    await until(async () =>
      (await sessionEvents(b, 'orphan')).some(
        (event) => event.type === 'approval/resolved' && event.data.decision === 'expired',
      ),
    );
  });
});
