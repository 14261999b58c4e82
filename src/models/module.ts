/** `moduleAdapter()`: builds and validates a provider config for a custom adapter module. */
import { z } from 'zod';
import { BroodError } from '../errors.js';
import { type ModelEntry, modelEntrySchema, toModelInfo } from './request-options.js';
import type { ModelProviderConfig } from './types.js';
import { parseOptions } from './validate.js';

export interface ModuleAdapterOptions {
  id: string;
  name?: string;
  /** Plain ids or `{ id, efforts?, defaultEffort?, maxTokens? }`. */
  models: (string | { id: string; efforts?: string[]; defaultEffort?: string; maxTokens?: number })[];
  /** Default false: only listed models route to this adapter. */
  acceptsUnlistedModels?: boolean;
  /** Handed to `createAdapter(config)` as `config.options`; must survive a structured clone into a worker. */
  options?: Record<string, unknown>;
  /** URL of an ES module exporting `createAdapter(config)` (a `file:` URL for local files; a URL object is accepted). */
  moduleUrl: string | URL;
}

const optionsSchema = z.strictObject({
  id: z.string().min(1),
  name: z.string().optional(),
  models: z.array(modelEntrySchema({})),
  acceptsUnlistedModels: z.boolean().optional(),
  options: z.record(z.string(), z.unknown()).optional(),
  moduleUrl: z
    .union([z.string(), z.instanceof(URL).transform((url) => url.href)])
    .refine((s) => URL.canParse(s), { message: 'must be an absolute URL (use pathToFileURL(path).href for a file)' }),
});

export function moduleAdapter(input: ModuleAdapterOptions): ModelProviderConfig {
  const parsed = parseOptions('moduleAdapter', optionsSchema, input);
  const options = parsed.options ?? {};
  try {
    // Configs are shipped to worker threads; a function or class instance would fail there, later and obscurely.
    structuredClone(options);
  } catch (error) {
    throw new BroodError(
      'INVALID_CONFIG',
      `moduleAdapter: invalid option 'options': must be structured-cloneable (${(error as Error).message})`,
      {
        details: { key: 'options' },
      },
    );
  }
  return {
    kind: 'module',
    id: parsed.id,
    name: parsed.name ?? parsed.id,
    models: (parsed.models as ModelEntry[]).map(toModelInfo),
    acceptsUnlistedModels: parsed.acceptsUnlistedModels ?? false,
    options: { ...options },
    moduleUrl: parsed.moduleUrl,
  };
}
