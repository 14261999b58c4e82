/** Which wire format a provider's requests use, for the media types it can carry (src/models/content-parts.ts). */
import type { PartFormat } from './content-parts.js';
import type { ModelProviderConfig } from './types.js';

const FORMAT_OF_KIND: Partial<Record<ModelProviderConfig['kind'], PartFormat>> = {
  'openai-compatible': 'chat-completions',
  'anthropic-compatible': 'anthropic-messages',
};

/**
 * The format of each configured provider by id; undefined for the kinds whose adapter decides what it
 * carries (scripted, a module, the AI SDK: its provider refuses what it cannot send).
 */
export function partFormatOf(configs: readonly ModelProviderConfig[]): (provider: string) => PartFormat | undefined {
  const formats = new Map(configs.map((config) => [config.id, FORMAT_OF_KIND[config.kind]]));
  return (provider) => formats.get(provider);
}
