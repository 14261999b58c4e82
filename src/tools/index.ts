/** Tools and the single resolver (SPEC §4). */
export { defineTool, TOOL_NAME_PATTERN, type ToolDeclaration } from './define-tool.js';
export {
  createToolSystem,
  presentedSchemas,
  type AgentToolScope,
  type ModelToolCall,
  type ToolSystem,
} from './system.js';
export type { ResolvedTool, ToolLayerName } from './resolver.js';
export type { ConcurrencyClass } from './execute.js';
export { RUN_CODE_DESCRIPTION, RUN_CODE_SCHEMA, RUN_CODE_TOOL_NAME, renderSdk } from './code-mode-sdk.js';
