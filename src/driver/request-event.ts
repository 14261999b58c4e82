/** What a driver logs as a model request's `model/request` event (SPEC: the session log). */
import type { SessionEventDataMap } from '../sessions/event-types.js';
import type { DriverPlan, DriverView } from '../wire/protocol.js';

/** A view's tool names, listed once per view: every request of every driver sharing it logs the same list. */
const toolNames = new WeakMap<DriverView, readonly string[]>();

/** A `model/request` event's data, its keys in the logged order. */
export function requestData(
  route: DriverPlan['route'],
  view: DriverView,
  threadId: number,
): SessionEventDataMap['model/request'] {
  let tools = toolNames.get(view);
  if (tools === undefined) {
    tools = Object.freeze(view.tools.map((tool) => tool.name));
    toolNames.set(view, tools);
  }
  const { provider, model, reasoningEffort, maxTokens } = route;
  if (reasoningEffort === undefined && maxTokens === undefined)
    return { provider, model, system: view.system, tools: tools as string[], threadId };
  return {
    provider,
    model,
    ...(reasoningEffort === undefined ? {} : { reasoningEffort }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
    system: view.system,
    tools: tools as string[],
    threadId,
  };
}
