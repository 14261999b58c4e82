/** Serves a parent gateway to one activation: its comlink calls arrive on the activation's link endpoint. */
import * as Comlink from 'comlink';
import type { GatewayRemote } from '../wire/gateway.js';

export function serveGateway(endpoint: Comlink.Endpoint, gateway: GatewayRemote): void {
  if (gateway.relay) gateway.relay(endpoint);
  else Comlink.expose(gateway, endpoint);
}
