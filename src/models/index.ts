/** The models folder's surface for brood's own tests; the package root (src/index.ts) curates its own subset. */

export { loadAdapter } from './adapters.js';
export { type AiSdkModelsOptions, aiSdkModels } from './ai-sdk/options.js';
export { type AnthropicCompatibleOptions, anthropicCompatible } from './anthropic.js';
export { createModelCatalog, type ModelCatalog } from './catalog.js';
export { type ModuleAdapterOptions, moduleAdapter } from './module.js';
export { type OpenAICompatibleOptions, openAICompatible } from './openai.js';
export type { ModelEntry, RequestOptions, RetryOptions, ToolChoice } from './request-options.js';
export { resolveChildRoute } from './route.js';
export {
  hasFaultTurns,
  type ScriptedOptions,
  type ScriptedScript,
  type ScriptedTurn,
  scriptedModels,
} from './scripted.js';
export type {
  ChatMessage,
  ModelAdapter,
  ModelFinish,
  ModelInfo,
  ModelProviderConfig,
  ModelRequest,
  ModelResponse,
  ReasoningBlock,
  ToolCallRecord,
} from './types.js';
