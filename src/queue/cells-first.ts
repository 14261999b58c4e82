import { GATEWAY_METHODS, type GatewayRemote } from '../wire/gateway.js';

/**
 * The gateway a host is served: after each call, before its answer leaves, the cells are pushed if
 * they moved, so a tool call that changed the registry is seen on the host before its result.
 */
export function withCellsFirst(gateway: GatewayRemote, pushCells: () => void): GatewayRemote {
  const served: Record<string, unknown> = { log: gateway.log.bind(gateway) };
  for (const method of GATEWAY_METHODS) {
    const call = gateway[method] as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (call === undefined) continue;
    served[method] = async (...args: unknown[]) => {
      const answer = await call.apply(gateway, args);
      pushCells();
      return answer;
    };
  }
  return Object.freeze(served) as unknown as GatewayRemote;
}
