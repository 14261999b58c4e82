/** Shape checks for what hosts and third-party providers hand the subagent runtime. */
import { BroodError } from '../errors.js';
import { isReportCap, isReportDelivery } from './report.js';
import type { SubagentProvider, SubagentStartRequest } from './types.js';

const CAPABILITIES = ['persona', 'toolFilter', 'depthLimit', 'agentOptions', 'outputSchema'] as const;

export function validateProvider(provider: SubagentProvider): void {
  const name = (provider as { name?: unknown } | undefined)?.name;
  if (typeof name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(name)) {
    throw new BroodError('INVALID_CONFIG', 'a subagent provider needs a name matching ^[a-zA-Z0-9_-]{1,64}$');
  }
  if (typeof provider.start !== 'function')
    throw new BroodError('INVALID_CONFIG', `subagent provider '${name}' has no start() function`);
  const capabilities = provider.capabilities as unknown as Record<string, unknown> | undefined;
  for (const capability of CAPABILITIES) {
    if (typeof capabilities?.[capability] !== 'boolean') {
      throw new BroodError(
        'INVALID_CONFIG',
        `subagent provider '${name}' must advertise capabilities.${capability} as a boolean`,
      );
    }
  }
  if (capabilities?.maxSteps !== undefined && typeof capabilities.maxSteps !== 'boolean') {
    throw new BroodError(
      'INVALID_CONFIG',
      `subagent provider '${name}' must advertise capabilities.maxSteps as a boolean (or leave it out)`,
    );
  }
  if (typeof provider.inheritsParentContext !== 'boolean') {
    throw new BroodError('INVALID_CONFIG', `subagent provider '${name}' must say whether it inheritsParentContext`);
  }
}

/** startContinuable's spec comes straight from host code: its shape is checked before anything reads it. */
export function validateContinuableSpec(spec: unknown): void {
  const bad = (what: string): never => {
    throw new BroodError('INVALID_CONFIG', `invalid startContinuable spec: ${what}`);
  };
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec))
    bad('expected { provider, label, request, signal }');
  const { provider, label, request, signal, reportDelivery, maxReportBytes } = spec as Record<string, unknown>;
  if (typeof provider !== 'string') bad('provider must be a provider name');
  if (typeof label !== 'string') bad('label must be a string');
  if (typeof request !== 'object' || request === null || Array.isArray(request))
    bad('request must be an object ({ parent, prompt, ... })');
  if (!(signal instanceof AbortSignal)) bad('signal must be an AbortSignal');
  if (reportDelivery !== undefined && !isReportDelivery(reportDelivery))
    bad("reportDelivery must be 'next-step' or 'quiet'");
  if (maxReportBytes !== undefined && !isReportCap(maxReportBytes))
    bad('maxReportBytes must be a positive safe integer');
}

export function validateStartRequest(request: SubagentStartRequest, needsSignal: boolean): void {
  if (typeof request !== 'object' || request === null)
    throw new BroodError('INVALID_ARGS', 'a start request must be an object');
  if (typeof request.prompt !== 'string') throw new BroodError('INVALID_ARGS', 'a start request needs a string prompt');
  if (needsSignal && !(request.signal instanceof AbortSignal))
    throw new BroodError('INVALID_ARGS', 'a start request needs an AbortSignal');
  if (request.label !== undefined && typeof request.label !== 'string')
    throw new BroodError('INVALID_ARGS', 'a start request label must be a string');
}
