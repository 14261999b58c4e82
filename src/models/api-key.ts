/**
 * `apiKeyEnv` names the environment variable an HTTP provider's key is read from, at request time, by
 * the process that sends the request. An unset variable used to surface only as the server's 401
 * ("Incorrect API key provided"), naming nothing of ours; these two checks name the variable instead.
 */
import { BroodError } from '../errors.js';
import { apiKeyOf } from './http.js';
import type { ModelProviderConfig } from './types.js';

const HTTP_KINDS: ReadonlySet<string> = new Set(['openai-compatible', 'anthropic-compatible']);

interface KeyOptions {
  apiKey?: unknown;
  apiKeyEnv?: unknown;
}

/** The variable an HTTP provider's key comes from, when no inline key replaces it. */
function keyVariable(options: KeyOptions): string | undefined {
  if (options.apiKey !== undefined || typeof options.apiKeyEnv !== 'string') return undefined;
  return options.apiKeyEnv;
}

/**
 * INVALID_CONFIG when a provider's `apiKeyEnv` names a variable this process does not have (unset or
 * empty). Only for drivers that send from this process: a queue host reads the variable on its own.
 */
export function checkApiKeyEnv(config: ModelProviderConfig): void {
  if (!HTTP_KINDS.has(config.kind)) return;
  const options = config.options as KeyOptions;
  const variable = keyVariable(options);
  if (variable === undefined || apiKeyOf({ apiKeyEnv: variable }) !== undefined) return;
  throw new BroodError(
    'INVALID_CONFIG',
    `model provider '${config.id}': environment variable ${variable} (its apiKeyEnv) is not set`,
    { details: { provider: config.id, key: 'apiKeyEnv', apiKeyEnv: variable } },
  );
}

/** A 401/403 diagnostic names the variable the key came from (and says when it is not set). */
export function withKeyHint(diagnostic: string, status: number | undefined, options: KeyOptions): string {
  const variable = keyVariable(options);
  if ((status !== 401 && status !== 403) || variable === undefined) return diagnostic;
  const unset = apiKeyOf({ apiKeyEnv: variable }) === undefined ? ', which is not set' : '';
  return `${diagnostic} (the API key is read from environment variable ${variable}${unset})`;
}
