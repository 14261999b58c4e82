/**
 * A host's activation between the job and its local pool: a cancel or force stop from the parent that
 * arrives before the pool took the activation (it is made on a parent's first job) applies once it
 * does, in order; later ones apply at once.
 */

import { MessageChannel } from 'node:worker_threads';
import * as Comlink from 'comlink';
import { afterEach, describe, expect, it } from 'vitest';
import { HostActivation, type ParentLinkPort } from '../../../src/queue/host-activation.js';
import { namedFrame, type ToParent } from '../../../src/wire/frames.js';
import { Link } from '../../../src/wire/link.js';
import { portCarrier } from '../../../src/wire/port-carrier.js';
import type { Activation } from '../../../src/wire/runner.js';
import { until } from '../../support/until.js';

/** A real link to a parent that never answers. */
const channels: MessageChannel[] = [];
function silentParent(): ParentLinkPort {
  const channel = new MessageChannel();
  channels.push(channel);
  const ignore = () => undefined;
  const link = new Link<ToParent, ToParent>(portCarrier(channel.port1), {
    accept: ignore,
    frame: ignore,
    invalid: ignore,
    closed: ignore,
  });
  return { endpoint: (a) => link.endpoint(a), send: (frame) => link.send(frame) };
}
afterEach(() => {
  for (const channel of channels.splice(0)) {
    channel.port1.close();
    channel.port2.close();
  }
});

/** The local pool's side of the seam, recording what the host asked of it. */
function recordingActivation(): { activation: Activation; asked: string[] } {
  const asked: string[] = [];
  const activation: Activation = {
    done: new Promise(() => undefined),
    cancel: (turn) => asked.push(`cancel ${turn ?? 'all'}`),
    forceStop: (reason) => asked.push(`stop ${reason}`),
  };
  return { activation, asked };
}

describe('HostActivation', () => {
  it('keeps a cancel and a force stop that arrive before the local activation, and applies them on attach', () => {
    const host = new HostActivation('p1', 1, [], silentParent());
    host.cancel(3);
    host.cancel(undefined);
    host.forceStop('the parent gave up');
    const { activation, asked } = recordingActivation();
    expect(asked).toEqual([]);
    host.attach(activation);
    expect(asked).toEqual(['cancel 3', 'cancel all', 'stop the parent gave up']);
    host.cancel(4);
    expect(asked.at(-1)).toBe('cancel 4');
  });

  it("relays a driver's call to the parent; severed, the relayed call still waiting answers WORKER_CRASHED", async () => {
    const sent: ToParent[] = [];
    const parent = silentParent();
    const host = new HostActivation('p1', 1, [], { ...parent, send: (frame) => sent.push(frame) });
    // The local pool's link: the driver's end and the host's end of one activation.
    const { port1, port2 } = new MessageChannel();
    channels.push({ port1, port2 } as MessageChannel);
    const ignore = () => undefined;
    const handlers = {
      accept: (raw: unknown) => namedFrame(raw as object) as ToParent,
      frame: ignore,
      invalid: ignore,
      closed: ignore,
    };
    const driverSide = new Link<ToParent, ToParent>(portCarrier(port1), handlers);
    const hostSide = new Link<ToParent, ToParent>(portCarrier(port2), handlers);
    host.gateway.relay?.(hostSide.endpoint(1));
    const claimNext = Comlink.wrap<{ claimNext(): Promise<unknown> }>(driverSide.endpoint(1)).claimNext;
    const pending = claimNext();
    await until(() => sent.length === 1);
    expect(sent[0]).toMatchObject({ kind: 'rpc', activation: 1, message: { type: 'APPLY', path: ['claimNext'] } });
    host.sever('gone');
    await expect(pending).resolves.toMatchObject({ ok: false, error: { code: 'WORKER_CRASHED' } });
    await expect(claimNext()).resolves.toMatchObject({ ok: false, error: { code: 'WORKER_CRASHED' } });
    expect(sent).toHaveLength(1);
  });

  it('a severed activation answers every call WORKER_CRASHED', async () => {
    const host = new HostActivation('p1', 1, [], silentParent());
    const pending = host.gateway.claimNext();
    host.sever('gone');
    await expect(pending).resolves.toMatchObject({ ok: false, error: { code: 'WORKER_CRASHED' } });
    await expect(host.gateway.endTurn({} as never)).resolves.toMatchObject({ error: { code: 'WORKER_CRASHED' } });
  });
});
