import { MessageChannel, type MessagePort } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { afterEach, describe, expect, it } from 'vitest';
import { ComlinkCaller } from '../../../src/wire/comlink-caller.js';
import { isGatewayCall } from '../../../src/wire/gateway.js';

const ports: MessagePort[] = [];
afterEach(() => {
  for (const port of ports.splice(0)) port.close();
});

/** A caller on one end of a real channel, `exposed` served by comlink itself on the other. */
function over(exposed: object): { caller: ComlinkCaller; sent: unknown[] } {
  const { port1, port2 } = new MessageChannel();
  ports.push(port1, port2);
  Comlink.expose(exposed, nodeEndpoint(port2));
  const sent: unknown[] = [];
  const endpoint = nodeEndpoint(port1);
  const post = endpoint.postMessage.bind(endpoint);
  endpoint.postMessage = (message: unknown, transfer?: Parameters<typeof post>[1]) => {
    sent.push(message);
    post(message, transfer);
  };
  return { caller: new ComlinkCaller(endpoint), sent };
}

describe('calling the gateway by comlink’s protocol, without its proxies', () => {
  it('is answered by Comlink.expose with the method’s value', async () => {
    const { caller } = over({ executeTool: (call: { name: string }) => ({ ok: true, value: `ran ${call.name}` }) });
    await expect(caller.call('executeTool', [{ name: 'noop' }])).resolves.toEqual({ ok: true, value: 'ran noop' });
  });

  it('sends what a parent serving another process accepts as a plain gateway call', async () => {
    const { caller, sent } = over({ refreshView: () => ({ ok: true, value: null }) });
    await caller.call('refreshView', []);
    expect(sent).toHaveLength(1);
    expect(isGatewayCall(sent[0])).toBe(true);
  });

  it('matches answers to calls when they come back out of order', async () => {
    let release: (value: unknown) => void = () => undefined;
    const slow = new Promise((resolve) => {
      release = resolve;
    });
    const { caller } = over({ later: () => slow.then(() => 'slow'), now: () => 'fast' });
    const first = caller.call('later', []);
    await expect(caller.call('now', [])).resolves.toBe('fast');
    release(undefined);
    await expect(first).resolves.toBe('slow');
  });

  it('keeps every overlapping call to its own answer, and the next call after them too', async () => {
    const releases: ((value: unknown) => void)[] = [];
    const { caller } = over({
      echo: (value: string) =>
        new Promise((resolve) => {
          releases.push(() => resolve(value));
        }),
    });
    const calls = ['a', 'b', 'c'].map((value) => caller.call('echo', [value]));
    await until(() => releases.length === 3);
    // The first call out is answered last; the others in reverse order.
    for (const release of [releases[2], releases[1], releases[0]]) release?.(undefined);
    await expect(Promise.all(calls)).resolves.toEqual(['a', 'b', 'c']);
    const next = caller.call('echo', ['d']);
    await until(() => releases.length === 4);
    releases[3]?.(undefined);
    await expect(next).resolves.toBe('d');
  });

  it('keeps two callers on one endpoint apart (a queue host relays its drivers’ calls beside its own)', async () => {
    const { port1, port2 } = new MessageChannel();
    ports.push(port1, port2);
    let release: (value: unknown) => void = () => undefined;
    const slow = new Promise((resolve) => {
      release = resolve;
    });
    Comlink.expose(
      { echo: (value: string) => (value === 'first' ? slow.then(() => value) : value) },
      nodeEndpoint(port2),
    );
    const endpoint = nodeEndpoint(port1);
    const host = new ComlinkCaller(endpoint);
    const relayed = new ComlinkCaller(endpoint);
    const first = host.call('echo', ['first']);
    await expect(relayed.call('echo', ['second'])).resolves.toBe('second');
    release(undefined);
    await expect(first).resolves.toBe('first');
  });

  it('rethrows what the exposed method threw, an Error with its message and name', async () => {
    const { caller } = over({
      fails: () => {
        throw new TypeError('no such call');
      },
      throwsValue: () => {
        throw 'a plain value';
      },
    });
    const error = await caller.call('fails', []).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ message: 'no such call', name: 'TypeError' });
    await expect(caller.call('throwsValue', [])).rejects.toBe('a plain value');
  });

  it('ignores messages that answer no call of its own', async () => {
    const { port1, port2 } = new MessageChannel();
    ports.push(port1, port2);
    const caller = new ComlinkCaller(nodeEndpoint(port1));
    port2.on('message', (message: { id: string }) => {
      port2.postMessage({ id: 'someone else', type: 'RAW', value: 'not yours' });
      port2.postMessage('noise');
      port2.postMessage({ id: message.id, type: 'RAW', value: 'yours' });
    });
    await expect(caller.call('anything', [])).resolves.toBe('yours');
  });

  it('refuses an answer that is neither a value nor a throw', async () => {
    const { port1, port2 } = new MessageChannel();
    ports.push(port1, port2);
    const caller = new ComlinkCaller(nodeEndpoint(port1));
    port2.on('message', (message: { id: string }) =>
      port2.postMessage({ id: message.id, type: 'HANDLER', name: 'proxy', value: 1 }),
    );
    await expect(caller.call('anything', [])).rejects.toMatchObject({ code: 'INTERNAL' });
  });
});

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 1));
}
