/**
 * The link protocol between a queue runner and a host, over Redis carriers joined by an in-memory
 * channel (JSON on the way, like a list entry): a host's gateway call reaches the parent's gateway
 * and its answer comes back; cells follow a call's answer; frames of activations the parent never
 * bound are answered `gone`; and an `rpc` frame that is anything but a plain call of a gateway
 * method (comlink's GET/SET, a path into a prototype) is turned away before comlink sees it.
 */
import { describe, expect, it } from 'vitest';
import type { PlacedActivation } from '../../../src/pool/driver-link.js';
import { HostActivation } from '../../../src/queue/host-activation.js';
import { HostLink } from '../../../src/queue/host-link.js';
import { ParentEnd } from '../../../src/queue/host-parent.js';
import type { GatewayRemote } from '../../../src/wire/gateway.js';
import { redisCarrier } from '../../../src/wire/redis-carrier.js';
import { until } from '../../support/until.js';

/** Two endpoints whose batches reach each other as JSON, in order; `sent` records the parent's frames. */
function joined(sent: unknown[]) {
  const parentSide = redisCarrier(
    {
      sendBatch: (_peer, frames) => {
        sent.push(...frames);
        toHost(frames);
      },
    },
    'host-1',
  );
  const hostChannel = { sendBatch: (_peer: string, frames: unknown[]) => parentSide.deliver(copy(frames)) };
  let toHost: (frames: unknown[]) => void = () => undefined;
  return {
    parentSide,
    hostChannel,
    connect: (deliver: (frames: unknown[]) => void) => (toHost = (f) => deliver(copy(f))),
  };
}
const copy = (frames: unknown[]): unknown[] => JSON.parse(JSON.stringify(frames));

function answering(calls: string[]): GatewayRemote {
  const ok = (value: unknown) => Promise.resolve({ ok: true as const, value });
  return {
    claimNext: () => ok(null),
    refreshView: () => ok(null),
    classify: (name) => {
      calls.push(`classify ${name}`);
      return ok('parallel');
    },
    executeTool: () => ok(null),
    callFromCode: () => ok(null),
    endProgram: () => ok(undefined),
    runTools: () => ok([]),
    log: () => ok(undefined),
    joinMessages: () => ok([]),
    endTurn: () => ok(null),
  };
}

function setUp() {
  const sent: unknown[] = [];
  const { parentSide, hostChannel, connect } = joined(sent);
  const strays: number[] = [];
  const link = new HostLink(parentSide, {
    hello: () => undefined,
    stray: (_link, frame) => strays.push(frame.activation),
    closed: () => undefined,
  });
  const parent = new ParentEnd(hostChannel, 'parent-1', 10_000, () => undefined);
  connect((frames) => parent.deliver(frames));
  const calls: string[] = [];
  const gateway = answering(calls);
  const entry: PlacedActivation = { token: 7, agentId: 'a', quarantined: false, gateway, settle: () => undefined };
  link.attach(entry);
  const cells = [new Int32Array(new SharedArrayBuffer(4))];
  const activation = new HostActivation('parent-1', 7, cells, parent);
  parent.activations.set(7, activation);
  /** The answers the parent sent to the rpc message with this id. */
  const answersTo = (id: string) => sent.filter((frame) => (frame as { m?: { id?: unknown } }).m?.id === id);
  return { link, parent, activation, gateway, calls, strays, cells, answersTo };
}

describe('the link protocol over Redis carriers', () => {
  it("a host's gateway call is answered by the parent's gateway; cells sent before the answer are set first", async () => {
    const { link, activation, calls, cells } = setUp();
    link.send({ kind: 'cells', activation: 7, values: [5] });
    const answer = await activation.gateway.classify('read', '{}');
    expect(answer).toEqual({ ok: true, value: 'parallel' });
    expect(calls).toEqual(['classify read']);
    expect(Atomics.load(cells[0] as Int32Array, 0)).toBe(5);
  });

  it('frames of an activation the parent never bound on this link are reported as strays, not served', async () => {
    const { parent, strays } = setUp();
    const unbound = new HostActivation('parent-1', 8, [], parent);
    void unbound.gateway.claimNext();
    await until(() => strays.length > 0);
    expect(strays).toEqual([8]);
  });

  it.each([
    ['a property read', { type: 'GET', id: 'x1', path: ['claimNext'] }],
    ['a property write', { type: 'SET', id: 'x2', path: ['claimNext'], value: { type: 'RAW', value: 1 } }],
    [
      'a path into a prototype',
      { type: 'SET', id: 'x3', path: ['__proto__', 'polluted'], value: { type: 'RAW', value: 1 } },
    ],
    ['a method that is not the gateway’s', { type: 'APPLY', id: 'x4', path: ['constructor'], argumentList: [] }],
    [
      'a proxy argument',
      { type: 'APPLY', id: 'x5', path: ['classify'], argumentList: [{ type: 'HANDLER', name: 'proxy', value: 1 }] },
    ],
  ])('an rpc frame carrying %s is turned away', async (_what, m) => {
    const { parent, gateway, calls, activation, answersTo } = setUp();
    const before = gateway.claimNext;
    parent.send({ kind: 'rpc', activation: 7, message: m });
    // A real call sent after it is answered: the forged frame was dropped, not queued ahead of it.
    expect(await activation.gateway.classify('after', '{}')).toEqual({ ok: true, value: 'parallel' });
    expect(calls).toEqual(['classify after']);
    expect(gateway.claimNext).toBe(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(answersTo(m.id)).toEqual([]);
  });
});
