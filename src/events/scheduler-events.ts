/** The scheduler's events, published on the agent they concern (only while a host subscribes). */

import type { SchedulerEvents } from '../scheduler/scheduler.js';
import { baseOf, type EventOrigin } from './from-log.js';
import type { EventHub } from './hub.js';

type Origin = Pick<EventOrigin, 'id' | 'parentId' | 'depth'>;

export function schedulerEvents(hub: EventHub, agents: ReadonlyMap<string, Origin>): SchedulerEvents {
  const originOf = (agentId: string): Origin | undefined => {
    const agent = agents.get(agentId);
    return agent !== undefined && hub.active && hub.isPublished(agent) ? agent : undefined;
  };
  return {
    queued: (agentId, what, provider, position) => {
      const origin = originOf(agentId);
      if (origin === undefined) return;
      hub.publish({
        ...baseOf(origin, hub.now()),
        type: 'queued',
        what,
        ...(provider === undefined ? {} : { provider }),
        position,
      });
    },
    admitted: (agentId, what, waitedMs) => {
      const origin = originOf(agentId);
      if (origin !== undefined) hub.publish({ ...baseOf(origin, hub.now()), type: 'admitted', what, waitedMs });
    },
    throttled: (agentId, provider, retryAfterMs) => {
      const origin = originOf(agentId);
      if (origin !== undefined)
        hub.publish({ ...baseOf(origin, hub.now()), type: 'throttled', provider, retryAfterMs });
    },
  };
}
