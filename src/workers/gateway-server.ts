/**
 * Serves a parent gateway on one end of a driver's port: comlink for the calls that need an answer,
 * and a plain listener for one-way log messages (see GatewayClient).
 */
import type { MessagePort } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { LOG_MESSAGE, type GatewayRemote } from './gateway-client.js';

export function serveGateway(port: MessagePort, gateway: GatewayRemote): void {
  Comlink.expose(gateway, nodeEndpoint(port));
  port.on('message', (message: unknown) => {
    const events = (message as { [LOG_MESSAGE]?: unknown } | null)?.[LOG_MESSAGE];
    if (events !== undefined) void gateway.log(events as never);
  });
}
