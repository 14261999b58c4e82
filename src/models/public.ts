/**
 * The models folder's public surface: the package root exports it as it is (src/index.ts), and the
 * folder's own index adds what brood's tests reach besides.
 */

export { type AiSdkModelsOptions, aiSdkModels } from './ai-sdk/options.js';
export {
  type AnthropicCompatibleOptions,
  type AnthropicModelEntry,
  type AnthropicRequestOptions,
  anthropicCompatible,
} from './anthropic.js';
export type { ModelCatalog } from './catalog.js';
export type { ContentPart } from './content-parts.js';
export { type ModuleAdapterOptions, moduleAdapter } from './module.js';
export { type OpenAICompatibleOptions, openAICompatible } from './openai.js';
export type { ModelEntry, RequestOptions, RetryOptions, ToolChoice } from './request-options.js';
export { type ScriptedOptions, type ScriptedScript, type ScriptedTurn, scriptedModels } from './scripted.js';
export type * from './types.js';
