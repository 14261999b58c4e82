/** `subagent-start` / `subagent-end`: published on the parent's agentId around every child run. */

import { sumUsage } from '../models/usage.js';
import type { StopReason, SubagentRunStartEvent, Usage } from '../types.js';
import { baseOf, type EventOrigin } from './from-log.js';
import type { EventHub } from './hub.js';

type Parent = Pick<EventOrigin, 'id' | 'parentId' | 'depth'>;

export function publishSubagentStart(
  hub: EventHub,
  parent: Parent | undefined,
  childId: string,
  mode: SubagentRunStartEvent['mode'],
  provider: string,
  /** The start request of a one-shot run (telemetry knows which tool call made it). */
  request?: object,
): void {
  if (parent === undefined) return;
  const child = { id: childId, parentId: parent.id, depth: parent.depth + 1 };
  hub.telemetry?.childStarted(child, mode, provider, request);
  if (!hub.active) return;
  hub.publish({ ...baseOf(parent, hub.now()), type: 'subagent-start', childId, mode, provider });
}

export function publishSubagentEnd(
  hub: EventHub,
  parent: Parent | undefined,
  childId: string,
  stopReason: StopReason,
  usage: Usage | undefined,
): void {
  if (!hub.active || parent === undefined) return;
  hub.publish({
    ...baseOf(parent, hub.now()),
    type: 'subagent-end',
    childId,
    stopReason,
    usage: sumUsage(usage ?? { inputTokens: 0, outputTokens: 0 }),
  });
}
