/**
 * The capability gate (SPEC §9 `start()` checks 1–3), run before anything is created. A provider
 * advertises only what it enforces; a request field is present when it is not `undefined`, so empty
 * values (`persona: ''`, `toolFilter: {}`) are requests too.
 */
import { checkMaxDepthDomain } from '../depth.js';
import { BroodError } from '../errors.js';
import { describe } from '../util/describe.js';
import type { SubagentCapabilities, SubagentProvider, SubagentStartRequest } from './types.js';

const CHECKED_FIELDS: [keyof SubagentStartRequest, keyof SubagentCapabilities][] = [
  ['outputSchema', 'outputSchema'],
  ['maxDepth', 'depthLimit'],
  ['toolFilter', 'toolFilter'],
  ['persona', 'persona'],
  ['agentOptions', 'agentOptions'],
  ['maxSteps', 'maxSteps'],
];

export function requireProvider(providers: Map<string, SubagentProvider>, name: string): SubagentProvider {
  const provider = providers.get(name);
  if (!provider) {
    const known = [...providers.keys()].join(', ') || '(none)';
    throw new BroodError('NO_PROVIDER', `no subagent provider named '${name}' is registered (registered: ${known})`, {
      details: { provider: name },
    });
  }
  return provider;
}

export function checkCapabilities(provider: SubagentProvider, request: Partial<SubagentStartRequest>): void {
  for (const [field, capability] of CHECKED_FIELDS) {
    if (request[field] !== undefined && provider.capabilities[capability] !== true) {
      throw new BroodError(
        'UNSUPPORTED_CAPABILITY',
        `subagent provider '${provider.name}' does not support '${capability}' (requested through ${field})`,
        { details: { provider: provider.name, capability } },
      );
    }
  }
}

/** The full gate in SPEC order; returns the provider that passed it. */
export function gate(
  providers: Map<string, SubagentProvider>,
  name: string,
  request: Partial<SubagentStartRequest>,
): SubagentProvider {
  const provider = requireProvider(providers, name);
  checkCapabilities(provider, request);
  checkMaxDepthDomain(request.maxDepth);
  checkMaxStepsDomain(request.maxSteps);
  return provider;
}

export function checkMaxStepsDomain(maxSteps: unknown): void {
  if (maxSteps === undefined) return;
  if (typeof maxSteps !== 'number' || !Number.isSafeInteger(maxSteps) || maxSteps <= 0) {
    throw new BroodError('INVALID_CONFIG', `maxSteps must be a positive safe integer, got ${describe(maxSteps)}`, {
      details: { maxSteps: describe(maxSteps) },
    });
  }
}
