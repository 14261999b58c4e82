/** Helpers for the delegation suites: waiting for a session's events, a provider with chosen capabilities. */
import type { Brood } from '../../../src/brood.js';
import { spawnProvider } from '../../../src/subagents/providers.js';
import type { SubagentProvider } from '../../../src/subagents/types.js';
import type { SessionEvent } from '../../../src/types.js';
import { eventsOf } from '../../support/events.js';
import { until } from '../../support/until.js';

/** Waits until `count` events of a session match (notices arrive asynchronously, after a turn ends). */
export async function waitForEvents(
  brood: Brood,
  id: string,
  match: (event: SessionEvent) => boolean,
  count = 1,
): Promise<SessionEvent[]> {
  let found: SessionEvent[] = [];
  await until(async () => {
    found = (await eventsOf(brood, id)).filter(match);
    return found.length >= count;
  });
  return found;
}

/** A custom provider with chosen capabilities, built on spawn's start. */
export function customProvider(
  name: string,
  overrides: {
    caps?: Partial<SubagentProvider['capabilities']>;
    inheritsParentContext?: boolean;
    continuable?: boolean;
  } = {},
): SubagentProvider {
  const base = spawnProvider({ name });
  const provider: SubagentProvider = {
    name,
    capabilities: { ...base.capabilities, ...overrides.caps },
    inheritsParentContext: overrides.inheritsParentContext ?? false,
    start: base.start,
  };
  if (overrides.continuable !== false && base.prepareContinuable) provider.prepareContinuable = base.prepareContinuable;
  return provider;
}
