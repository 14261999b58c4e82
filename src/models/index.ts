/** The models folder's surface for brood's own tests; the package root (src/index.ts) curates its own subset. */
export { createModelCatalog, type ModelCatalog } from './catalog.js';
export { resolveChildRoute } from './route.js';
export {
  scriptedModels,
  hasFaultTurns,
  type ScriptedOptions,
  type ScriptedTurn,
  type ScriptedScript,
} from './scripted.js';
export { openAICompatible, type OpenAICompatibleOptions } from './openai.js';
export { anthropicCompatible, type AnthropicCompatibleOptions } from './anthropic.js';
export { moduleAdapter, type ModuleAdapterOptions } from './module.js';
export { aiSdkModels, type AiSdkModelsOptions } from './ai-sdk/options.js';
export type { RequestOptions, RetryOptions, ToolChoice, ModelEntry } from './request-options.js';
export { loadAdapter } from './adapters.js';
export type {
  ModelAdapter,
  ModelProviderConfig,
  ModelInfo,
  ModelRequest,
  ModelResponse,
  ChatMessage,
  ModelFinish,
  ToolCallRecord,
  ReasoningBlock,
} from './types.js';
