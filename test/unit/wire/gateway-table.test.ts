/**
 * The gateway is declared once (GATEWAY in src/wire/protocol.ts) and both sides follow the table: the
 * parent's dispatch checks every argument against it before the implementation runs, the driver's
 * side checks every answer, the relay's allow-list is the table's calls, and an optional method a
 * parent leaves out answers its declared value without crossing.
 */
import { describe, expect, it } from 'vitest';
import {
  type DriverGateway,
  driverHostOver,
  GATEWAY_METHODS,
  type GatewayImplementation,
  isGatewayCall,
  serveTable,
} from '../../../src/wire/gateway.js';
import { GATEWAY } from '../../../src/wire/protocol.js';
import { expectCode } from '../../support/codes.js';

/** A parent that answers every method well and records which ran. */
function recordingParent(ran: string[]): GatewayImplementation {
  const record = <T>(name: string, value: T) => {
    ran.push(name);
    return value;
  };
  return {
    claimNext: () => record('claimNext', null),
    refreshView: () => record('refreshView', { system: '', tools: [], classes: {} }),
    classify: () => record('classify', 'parallel' as const),
    executeTool: () => record('executeTool', { isError: false, content: 'ok' }),
    callFromCode: () => record('callFromCode', { ok: true as const, json: '1' }),
    endProgram: () => record('endProgram', undefined),
    runTools: () => record('runTools', []),
    log: () => record('log', undefined),
    joinMessages: () => record('joinMessages', []),
    endTurn: () => record('endTurn', null),
    admit: () => record('admit', null),
  };
}

const call = (id: string, method: string, argumentList: unknown[] = []) => ({
  id,
  type: 'APPLY',
  path: [method],
  argumentList: argumentList.map((value) => ({ type: 'RAW', value })),
});

describe('the gateway table', () => {
  it('lists every method but the one-way log as a call a driver host may relay', () => {
    expect([...GATEWAY_METHODS].sort()).toEqual(
      Object.keys(GATEWAY)
        .filter((name) => name !== 'log')
        .sort(),
    );
    for (const method of GATEWAY_METHODS) expect(isGatewayCall(call('1', method))).toBe(true);
    expect(isGatewayCall(call('1', 'log'))).toBe(false);
    expect(isGatewayCall(call('1', 'relay'))).toBe(false);
    expect(isGatewayCall(call('1', 'constructor'))).toBe(false);
  });

  it('refuses a call whose arguments break their declaration with INTERNAL, before the parent runs it', async () => {
    const ran: string[] = [];
    const host = driverHostOver(serveTable(recordingParent(ran)));
    const untyped = host as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    await expectCode(untyped.executeTool!({ callId: '', name: 'echo', arguments: '{}' }), 'INTERNAL');
    await expectCode(untyped.classify!('echo', 42), 'INTERNAL');
    await expectCode(untyped.joinMessages!(-1), 'INTERNAL');
    await expectCode(untyped.endTurn!({ turn: 1 }), 'INTERNAL');
    await expectCode(untyped.admit!({ provider: '', tokens: 1 }), 'INTERNAL');
    await expectCode(untyped.log!([{ type: '', data: {} }]), 'INTERNAL');
    expect(ran).toEqual([]);
  });

  it('runs well-formed calls and answers them as declared', async () => {
    const ran: string[] = [];
    const host: DriverGateway = driverHostOver(serveTable(recordingParent(ran)));
    await expect(host.classify('echo', '{}')).resolves.toBe('parallel');
    await expect(host.executeTool({ callId: 'c1', name: 'echo', arguments: '{}' })).resolves.toEqual({
      isError: false,
      content: 'ok',
    });
    await expect(host.admit({ provider: 'p', tokens: 10 })).resolves.toBeNull();
    expect(ran).toEqual(['classify', 'executeTool', 'admit']);
  });

  it("refuses an answer that breaks the method's declared reply with INTERNAL", async () => {
    const parent = { ...recordingParent([]), classify: () => 'sometimes' } as unknown as GatewayImplementation;
    await expectCode(driverHostOver(serveTable(parent)).classify('echo', '{}'), 'INTERNAL');
  });

  it('answers an optional method the parent leaves out with its declared value, and `before` can refuse every call', async () => {
    const { admit: _governsNothing, ...parent } = recordingParent([]);
    await expect(driverHostOver(serveTable(parent)).admit({ provider: 'p', tokens: 1 })).resolves.toBeNull();
    const refusing = serveTable(recordingParent([]), () => {
      throw Object.assign(new Error('gone'), { code: 'WORKER_CRASHED' });
    });
    const answer = await refusing.claimNext();
    expect(answer.ok).toBe(false);
  });
  it("fails the table's next call with a one-way log's protocol violation, which has no reply of its own", async () => {
    const ran: string[] = [];
    const served = serveTable(recordingParent(ran));
    const host = driverHostOver(served);
    await served.log([{ type: 'not an event' }] as never);
    await expectCode(host.claimNext(), 'INTERNAL');
    expect(ran).toEqual([]);
  });

  it('serves implementations written as classes, their methods called on the instance', async () => {
    class Parent {
      constructor(private readonly answer: null) {}
      claimNext() {
        return this.answer;
      }
    }
    const parent = Object.assign(new Parent(null), recordingParent([]), { claimNext: Parent.prototype.claimNext });
    await expect(driverHostOver(serveTable(parent)).claimNext()).resolves.toBeNull();
  });
});
