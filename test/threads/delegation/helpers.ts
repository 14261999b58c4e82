/** Helpers for the delegation end-to-end tests (real runtime, scripted models, worker threads). */
import { createBrood } from '../../../src/brood.js';
import type { Brood, BroodOptions } from '../../../src/brood.js';
import { spawnProvider } from '../../../src/subagents/providers.js';
import type { SubagentProvider } from '../../../src/subagents/types.js';
import type { SessionEvent } from '../../../src/types.js';
import { behaviourRunner } from '../../support/runner-choice.js';

export const route = { provider: 'scripted', model: 'scripted' } as const;

export function makeBrood(options: BroodOptions = {}): Brood {
  return createBrood({ runner: behaviourRunner(), pool: { threads: 2 }, ...options });
}

export async function eventsOf(brood: Brood, id: string): Promise<SessionEvent[]> {
  return (await brood.sessions.read(id)).events;
}

export function ofType(events: SessionEvent[], type: string): SessionEvent[] {
  return events.filter((event) => event.type === type);
}

/** Polls a session until `count` events match (notices arrive asynchronously, after a turn ends). */
export async function waitForEvents(
  brood: Brood,
  id: string,
  match: (event: SessionEvent) => boolean,
  count = 1,
  timeoutMs = 10_000,
): Promise<SessionEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await eventsOf(brood, id)).filter(match);
    if (found.length >= count) return found;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${count} matching events in ${id} (have ${found.length})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
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

export function thrown(fn: () => unknown): { code?: string; message: string } | undefined {
  try {
    fn();
  } catch (error) {
    return error as { code?: string; message: string };
  }
  return undefined;
}
