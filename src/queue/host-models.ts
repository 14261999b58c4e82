/**
 * Which model provider configs a host's worker pool gets for a set read from Redis. Data comes from
 * the parent, code only from the host: a config read from Redis is plain data, and a field naming
 * code to load (a `module` adapter's `moduleUrl`, or any field a kind that loads code adds) is never
 * taken from it, whoever wrote it. Kinds whose adapter is built into brood keep the parent's data
 * fields; every other kind is resolved by provider id against the host's own configuration
 * (`brood host --config`, HostOptions.codeProviders), which supplies its code fields. A provider of
 * such a kind the host was not configured with is left out, and an activation routed to it fails
 * with INVALID_CONFIG before anything is loaded.
 */
import { BroodError } from '../errors.js';
import type { ModelProviderConfig } from '../models/types.js';

/** The kinds whose adapter is brood's own, reading only data (options) from the config. */
const DATA_KINDS: ReadonlySet<string> = new Set(['scripted', 'openai-compatible', 'anthropic-compatible']);

/** The fields of a provider config that are data, for every kind; any other field may name code. */
const DATA_FIELDS = ['kind', 'id', 'name', 'models', 'acceptsUnlistedModels', 'options'] as const;

/**
 * A provider the host may load code for: its id and kind, and the fields naming the code (for
 * `module`: `moduleUrl`). A whole `moduleAdapter()` config serves too; its data fields are not used.
 */
export interface HostCodeProvider {
  kind: string;
  id: string;
  [field: string]: unknown;
}

export interface HostModels {
  models: ModelProviderConfig[];
  /** Providers of a code-loading kind this host was not configured with: id → kind. */
  unconfigured: ReadonlyMap<string, string>;
}

export function hostModels(fromRedis: readonly ModelProviderConfig[], own: readonly HostCodeProvider[]): HostModels {
  const models: ModelProviderConfig[] = [];
  const unconfigured = new Map<string, string>();
  for (const config of fromRedis) {
    const data = dataFieldsOf(config);
    if (DATA_KINDS.has(config.kind)) {
      models.push(data);
      continue;
    }
    const code = own.find((provider) => provider.id === config.id && provider.kind === config.kind);
    if (code === undefined) unconfigured.set(config.id, config.kind);
    else models.push({ ...codeFieldsOf(code), ...data });
  }
  return { models, unconfigured };
}

/** Why an activation routed to `provider` does not run on this host, when it does not. */
export function unconfiguredProvider(models: HostModels, provider: string): BroodError | undefined {
  const kind = models.unconfigured.get(provider);
  if (kind === undefined) return undefined;
  return new BroodError(
    'INVALID_CONFIG',
    `model provider '${provider}' (kind '${kind}') loads code, and this host was not configured with it: a host loads adapter code only from its own configuration (brood host --config)`,
    { details: { provider, kind } },
  );
}

function dataFieldsOf(config: ModelProviderConfig): ModelProviderConfig {
  const data: Record<string, unknown> = {};
  for (const field of DATA_FIELDS) if (config[field] !== undefined) data[field] = config[field];
  return data as unknown as ModelProviderConfig;
}

function codeFieldsOf(provider: HostCodeProvider): Record<string, unknown> {
  const code: Record<string, unknown> = { ...provider };
  for (const field of DATA_FIELDS) delete code[field];
  return code;
}
