/** Shared helpers for the ACP suites: the fixture agent's command, a runtime with an ACP provider, session readers. */
import { fileURLToPath } from 'node:url';
import type { AcpProviderOptions, Agent, Brood, BroodOptions } from '../../../src/index.js';
import { acpProvider, createBrood, memorySessions, scriptedModels } from '../../../src/index.js';
import { eventsOf } from '../../support/events.js';
import { route } from '../../support/route.js';

export const FIXTURE_AGENT = fileURLToPath(new URL('./fixtures/fixture-agent.mjs', import.meta.url));

export function fixtureOptions(extra: Partial<AcpProviderOptions> = {}): AcpProviderOptions {
  return { command: process.execPath, args: [FIXTURE_AGENT], ...extra };
}

export interface AcpHarness {
  brood: Brood;
  lead: Agent;
  close(): Promise<void>;
}

export async function acpHarness(provider: AcpProviderOptions, options: BroodOptions = {}): Promise<AcpHarness> {
  const brood = createBrood({
    pool: { threads: 1 },
    models: [scriptedModels({ id: 'scripted', scripts: [] })],
    sessions: memorySessions(),
    ...options,
    providers: [...(options.providers ?? []), acpProvider(provider)],
  });
  const lead = await brood.createAgent({ model: route });
  return { brood, lead, close: () => brood.close() };
}

export function signal(): AbortSignal {
  return new AbortController().signal;
}

/** The pid recorded in an ACP child's descriptor. */
export async function agentPid(brood: Brood, childId: string): Promise<number> {
  const descriptor = (await eventsOf(brood, childId)).find((event) => event.type === 'subagent/descriptor');
  return Number((descriptor?.data.acp as { pid?: unknown } | undefined)?.pid);
}
