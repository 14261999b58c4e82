/**
 * The driver (src/driver/loop.ts) against an in-process fake parent, wired through a real
 * MessageChannel with the same link + comlink + GatewayClient path a worker uses — no threads. Proves
 * the protocol: replies are validated (malformed → INTERNAL), error codes survive the crossing, and a
 * closed link rejects pending calls with WORKER_CRASHED instead of leaving them hanging.
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { Driver } from '../../../src/driver/loop.js';
import { BroodError } from '../../../src/errors.js';
import { scriptedModels } from '../../../src/models/scripted.js';
import type { ChatMessage, ModelAdapter, ModelRequest, ModelResponse } from '../../../src/models/types.js';
import { serveGateway } from '../../../src/pool/gateway-server.js';
import { outcomeEnd, type PlacedActivation, ThreadLink } from '../../../src/pool/thread-link.js';
import { GatewayClient } from '../../../src/thread/gateway-client.js';
import { ThreadHost } from '../../../src/thread/thread-host.js';
import type { ToolResult } from '../../../src/types.js';
import { namedFrame, type ToHost, type ToParent } from '../../../src/wire/frames.js';
import type { GatewayRemote } from '../../../src/wire/gateway.js';
import { Link } from '../../../src/wire/link.js';
import { portCarrier } from '../../../src/wire/port-carrier.js';
import type { ClaimedMessage, DriverEvent, DriverPlan, DriverView, TurnReport } from '../../../src/wire/protocol.js';
import { replyOf } from '../../../src/wire/reply.js';
import { VersionCell } from '../../../src/wire/version-cell.js';
import { createBoard } from '../../../src/wire/watch-board.js';
import { expectCode } from '../../support/codes.js';
import { deferred } from '../../support/deferred.js';
import { planDefaults } from '../../support/plan.js';

const ports: MessagePort[] = [];
afterEach(() => {
  for (const port of ports.splice(0)) port.close();
});

/** The parent's side, faked: an inbox, a tool table, a log. Methods may be overridden per test. */
class FakeParent {
  readonly inbox: string[] = [];
  readonly events: DriverEvent[] = [];
  readonly reports: TurnReport[] = [];
  readonly executed: string[] = [];
  view: DriverView = {
    system: 'sys v1',
    tools: [{ name: 'echo', description: 'echo', parameters: { type: 'object' } }],
    classes: { echo: 'parallel' },
  };
  tool: (call: { callId: string; name: string; arguments: string }) => Promise<ToolResult> = async (call) => ({
    isError: false,
    content: `echo ${call.arguments}`,
  });
  private turn = 0;
  /** Replacement gateway methods (set before connect), e.g. to send malformed replies. */
  overrides: Partial<Record<keyof GatewayRemote, (...args: never[]) => unknown>> = {};

  gateway(): GatewayRemote {
    const defaults: GatewayRemote = {
      claimNext: () => replyOf((): ClaimedMessage | null => this.claim()),
      refreshView: () => replyOf(() => this.view),
      classify: () => replyOf(() => 'parallel' as const),
      runTools: () =>
        replyOf((): never => {
          throw new Error('this fake parent runs no batches (plans here leave toolsInParent unset)');
        }),
      executeTool: (call) =>
        replyOf(() => {
          this.executed.push(call.callId);
          return this.tool(call);
        }),
      callFromCode: () =>
        replyOf((): never => {
          throw new Error('this fake parent runs no run_code programs');
        }),
      endProgram: () => replyOf(() => undefined),
      log: (events) => replyOf(() => void this.events.push(...events)),
      joinMessages: () => replyOf(() => []),
      endTurn: (report) =>
        replyOf((): ClaimedMessage | null => {
          this.reports.push(report);
          return this.claim();
        }),
    };
    return { ...defaults, ...this.overrides } as GatewayRemote;
  }

  private claim(): ClaimedMessage | null {
    const text = this.inbox.shift();
    if (text === undefined) return null;
    this.turn += 1;
    return { turn: this.turn, messageId: `m${this.turn}`, text, aborted: text.startsWith('[aborted]') };
  }
}

function plainLink<In extends ToParent | ToHost>(
  port: MessagePort,
  frame: (frame: In) => void,
  closed: () => void = () => undefined,
) {
  return new Link<In, ToParent | ToHost>(portCarrier(port), {
    accept: (raw) => namedFrame(raw as object) as In,
    frame,
    invalid: () => undefined,
    closed,
  });
}

/** Wires a parent and a driver across a real MessageChannel and two links (the worker path, minus the thread). */
function connect(
  parent: FakeParent,
  adapter: ModelAdapter,
  plan: Partial<DriverPlan> = {},
  driverBatches?: unknown[][],
) {
  const { port1, port2 } = new MessageChannel();
  ports.push(port1, port2);
  if (driverBatches) {
    const post = port2.postMessage.bind(port2);
    port2.postMessage = (batch: unknown[]) => {
      driverBatches.push(batch);
      post(batch);
    };
  }
  const gateway = parent.gateway();
  const parentLink = plainLink<ToParent>(port1, (frame) => {
    if (frame.kind === 'log') void gateway.log(frame.events);
  });
  serveGateway(parentLink.endpoint(1), gateway);
  let client!: GatewayClient;
  const driverLink = plainLink<ToHost>(
    port2,
    () => undefined,
    () => client.fail("the parent closed this thread's link"),
  );
  client = new GatewayClient(driverLink.endpoint(1), (events) =>
    driverLink.send({ kind: 'log', activation: 1, events }),
  );
  const version = new VersionCell();
  const fullPlan: DriverPlan = {
    agentId: 'a1',
    route: { provider: 'fake', model: 'fake' },
    view: parent.view,
    ...planDefaults(),
    versions: [version.cell],
    ...plan,
  };
  const driver = new Driver(fullPlan, client.host, adapter);
  return { driver, client, parentPort: port1, version };
}

/** An adapter that replays responses and records what each request saw. */
function replay(responses: Omit<ModelResponse, 'usage'>[]): ModelAdapter & { seen: ModelRequest[] } {
  const seen: ModelRequest[] = [];
  return {
    seen,
    async request(request) {
      seen.push({ ...request, messages: [...request.messages] });
      const next = responses.shift() ?? { text: 'done', toolCalls: [], finish: 'stop' };
      return { ...next, usage: { inputTokens: 10, outputTokens: 2 } };
    },
  };
}

const call = (callId: string, args = '{}') => ({ callId, name: 'echo', arguments: args });

describe('Driver over a MessageChannel', () => {
  it('runs a turn: claim, request, parallel tools committed in order, re-request, endTurn', async () => {
    const parent = new FakeParent();
    parent.inbox.push('hello');
    const order: string[] = [];
    parent.tool = async (c) => {
      // The first call finishes last.
      if (c.callId === 'c1') await new Promise((resolve) => setTimeout(resolve, 5));
      order.push(c.callId);
      return { isError: false, content: `r:${c.callId}` };
    };
    const adapter = replay([{ text: 'thinking', toolCalls: [call('c1'), call('c2')], finish: 'tool-calls' }]);
    const { driver, version } = connect(parent, adapter);
    const nextView = { ...parent.view, system: 'sys v2' };
    const original = parent.tool;
    parent.tool = async (c) => {
      parent.view = nextView;
      version.bump(); // a registry change while tools run: the next request must see it
      return original(c);
    };

    await driver.runActivation();

    expect(order).toEqual(['c2', 'c1']);
    expect(parent.events.map((e) => e.type)).toEqual([
      'model/request',
      'assistant/message',
      'tool/call',
      'tool/call',
      'tool/result',
      'tool/result',
      'model/request',
      'assistant/message',
    ]);
    expect(parent.events.filter((e) => e.type === 'tool/result').map((e) => e.data.callId)).toEqual(['c1', 'c2']);
    expect(parent.events.filter((e) => e.type === 'model/request').map((e) => e.data.system)).toEqual([
      'sys v1',
      'sys v2',
    ]);
    expect(adapter.seen[1]?.messages.slice(-2)).toEqual<ChatMessage[]>([
      { role: 'tool', callId: 'c1', name: 'echo', content: 'r:c1', isError: false },
      { role: 'tool', callId: 'c2', name: 'echo', content: 'r:c2', isError: false },
    ]);
    expect(parent.reports).toEqual([
      { turn: 1, output: 'done', stopReason: 'completed', usage: { inputTokens: 20, outputTokens: 4 } },
    ]);
  });

  it("a turn's last events and its endTurn leave in one message, the events first", async () => {
    const parent = new FakeParent();
    parent.inbox.push('hello');
    const batches: unknown[][] = [];
    // The answer comes after a while, as a model's does: the request's log has left by then.
    const adapter: ModelAdapter = {
      request: () =>
        new Promise((resolve) =>
          setTimeout(
            () => resolve({ text: 'done', toolCalls: [], finish: 'stop', usage: { inputTokens: 1, outputTokens: 1 } }),
            5,
          ),
        ),
    };
    const { driver } = connect(parent, adapter, {}, batches);
    await driver.runActivation();
    const kinds = (batch: unknown[]) =>
      batch.map((frame) => {
        const f = frame as { k: string; events?: DriverEvent[]; m?: { path?: string[] } };
        return f.k === 'log' ? `log:${f.events?.map((e) => e.type).join('+')}` : `${f.k}:${f.m?.path?.join('.')}`;
      });
    const last = batches.find((batch) => kinds(batch).includes('rpc:endTurn'));
    expect(last && kinds(last)).toEqual(['log:assistant/message', 'rpc:endTurn']);
    expect(parent.events.map((e) => e.type)).toEqual(['model/request', 'assistant/message']);
    expect(parent.reports.map((r) => r.stopReason)).toEqual(['completed']);
  });

  it("a custom adapter's request.signal is an AbortSignal the turn's cancel aborts, in a copy of the request too", async () => {
    const parent = new FakeParent();
    parent.inbox.push('wait for me');
    const signals: AbortSignal[] = [];
    const asked = deferred();
    const adapter: ModelAdapter = {
      request: (request) => {
        signals.push(request.signal, { ...request }.signal);
        asked.resolve();
        return new Promise((_, reject) =>
          request.signal.addEventListener('abort', () => reject(new BroodError('ABORTED', 'aborted')), { once: true }),
        );
      },
    };
    const { driver } = connect(parent, adapter);
    const running = driver.runActivation();
    await asked.promise;
    expect(signals[0]).toBeInstanceOf(AbortSignal);
    expect(signals[1]).toBe(signals[0]);
    expect(signals[0]?.aborted).toBe(false);
    driver.cancel();
    await running;
    expect(signals[0]?.aborted).toBe(true);
    expect(parent.reports.map((r) => r.stopReason)).toEqual(['aborted']);
  });

  it('a claimed message that was aborted while queued ends aborted without a model request', async () => {
    const parent = new FakeParent();
    parent.inbox.push('[aborted] never asked', 'asked');
    const adapter = replay([]);
    const { driver } = connect(parent, adapter);
    await driver.runActivation();
    expect(parent.reports.map((r) => r.stopReason)).toEqual(['aborted', 'completed']);
    expect(adapter.seen).toHaveLength(1);
  });

  it('error codes survive the crossing: a refused tool call commits its code', async () => {
    const parent = new FakeParent();
    parent.inbox.push('go');
    parent.overrides.executeTool = () =>
      Promise.resolve({ ok: false, error: { code: 'UNKNOWN_TOOL', message: 'no such tool' } });
    const { driver } = connect(parent, replay([{ text: '', toolCalls: [call('c1')], finish: 'tool-calls' }]));
    await driver.runActivation();
    const [result] = parent.events.filter((e) => e.type === 'tool/result');
    expect(result?.data).toMatchObject({ callId: 'c1', isError: true, errorCode: 'UNKNOWN_TOOL' });
  });

  it.each([
    ['a value of the wrong shape', { ok: true, value: { turn: 'one', messageId: 'm', text: 'x', aborted: false } }],
    ['a reply that is not an envelope', 42],
    ['an envelope without ok', { value: null }],
  ])('a malformed claimNext reply (%s) is rejected with INTERNAL', async (_label, reply) => {
    const parent = new FakeParent();
    parent.overrides.claimNext = () => Promise.resolve(reply);
    const { driver } = connect(parent, replay([]));
    await expectCode(driver.runActivation(), 'INTERNAL');
  });

  it('a malformed tool result from the parent becomes an INTERNAL tool error, not a crash', async () => {
    const parent = new FakeParent();
    parent.inbox.push('go');
    parent.overrides.executeTool = () => Promise.resolve({ ok: true, value: { isError: 'no', content: 7 } });
    const { driver } = connect(parent, replay([{ text: '', toolCalls: [call('c1')], finish: 'tool-calls' }]));
    await driver.runActivation();
    expect(parent.events.find((e) => e.type === 'tool/result')?.data).toMatchObject({
      isError: true,
      errorCode: 'INTERNAL',
    });
    expect(parent.reports.map((r) => r.stopReason)).toEqual(['completed']);
  });

  it('closing the parent port rejects pending calls with WORKER_CRASHED, and later calls too', async () => {
    const parent = new FakeParent();
    parent.inbox.push('go');
    const entered = deferred();
    parent.overrides.executeTool = () => {
      entered.resolve();
      return new Promise<never>(() => {}); // the parent never answers
    };
    const { driver, client, parentPort } = connect(
      parent,
      replay([{ text: '', toolCalls: [call('c1')], finish: 'tool-calls' }]),
    );
    const activation = driver.runActivation();
    await entered.promise;
    const direct = client.host.executeTool(call('c9'));
    parentPort.close();

    await expectCode(direct, 'WORKER_CRASHED');
    await expectCode(activation, 'WORKER_CRASHED');
    await expectCode(client.host.claimNext(), 'WORKER_CRASHED');
    expect(parent.reports).toEqual([]);
  });
});

/** A ThreadHost (the pool thread's side) and a ThreadLink (the parent's side) over one MessageChannel, in-process. */
function hostAndLink(models: Parameters<typeof scriptedModels>[0][] = []) {
  const { port1, port2 } = new MessageChannel();
  ports.push(port1, port2);
  new ThreadHost(
    portCarrier(port2),
    models.map((config) => scriptedModels(config)),
  );
  const thread = new ThreadLink(1, undefined, portCarrier(port1), createBoard(), () => undefined);
  const run = (token: number, plan: unknown, gateway: GatewayRemote) =>
    new Promise<unknown>((resolve) => {
      const entry: PlacedActivation = {
        token,
        agentId: 'a1',
        quarantined: false,
        gateway,
        settle: (end) => {
          thread.release(token);
          resolve('outcome' in end ? end.outcome : end);
        },
      };
      thread.start(entry, plan as DriverPlan);
    });
  return { thread, run };
}

describe('ThreadHost (the pool thread side of a link, run in-process)', () => {
  it('answers a start with a malformed plan with an INTERNAL outcome instead of throwing', async () => {
    const { run } = hostAndLink();
    const outcome = await run(7, { agentId: 1 }, new FakeParent().gateway());
    expect(outcome).toMatchObject({ ok: false, error: { code: 'INTERNAL' } });
    expect(outcomeEnd(outcome).end).toMatchObject({ kind: 'failed', stopReason: 'error' });
  });

  it('serves a turn over the port and honours a cancel control message for the running turn', async () => {
    const parent = new FakeParent();
    parent.inbox.push('slow please');
    const requested = deferred();
    parent.overrides.log = (events: DriverEvent[]) => {
      parent.events.push(...events);
      if (events.some((e) => e.type === 'model/request')) requested.resolve();
      return replyOf(() => undefined);
    };
    const { thread, run } = hostAndLink([
      { id: 'fake', scripts: [{ match: 'slow', latencyMs: 10_000, turns: [{ text: 'late' }] }] },
    ]);
    const plan = {
      agentId: 'a1',
      route: { provider: 'fake', model: 'scripted' },
      view: { system: '', tools: [], classes: {} },
      ...planDefaults(),
      maxParallelToolCalls: 2,
      versions: [new VersionCell().cell],
    };
    const outcome = run(3, plan, parent.gateway());
    await requested.promise;
    thread.cancel(4, 1); // another activation: ignored
    thread.cancel(3, 99); // not the running turn: ignored
    thread.cancel(3, 1);

    expect(await outcome).toEqual({ ok: true });
    expect(parent.reports).toEqual([
      { turn: 1, output: '', stopReason: 'aborted', usage: { inputTokens: 0, outputTokens: 0 } },
    ]);
    expect(parent.events.map((e) => e.type)).toEqual(['model/request']);
  });
});
