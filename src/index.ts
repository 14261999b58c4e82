// The curated public surface of brood (SPEC §3). Internals are not re-exported wholesale.

export type { AcpPermissionPolicy, AcpPermissionRequest, AcpProviderOptions } from './acp/client/options.js';
export type { AcpProvider } from './acp/client/provider.js';
export { acpProvider } from './acp/client/provider.js';
export type { HistoryMessage, HistoryToolCall } from './agents/given-history.js';
export type {
  ApprovalCall,
  ApprovalOutcome,
  ApprovalRequest,
  ApprovalRequestEvent,
  ApprovalResolvedEvent,
  ApprovalResponse,
  Approvals,
  ApprovalsOptions,
  ApprovalVerdict,
  ChildApprovals,
  ToolApproval,
} from './approvals/types.js';
export type {
  Brood,
  BroodOptions,
  BroodPlugin,
  CreateAgentOptions,
  ResumeAgentOptions,
  UsageOptions,
} from './brood.js';
export { createBrood } from './brood.js';
export type { SubagentToolConfig } from './delegation/index.js';
export { jobTools, messageTools, subagentTool } from './delegation/index.js';
export type { BroodErrorCode } from './errors.js';
export { BroodError, ERROR_CODES } from './errors.js';
export type { McpHttpServer, McpServer, McpServerStatus, McpStdioServer, McpToolsOptions } from './mcp/config.js';
export { mcpTools } from './mcp/plugin.js';
export type { BroodMcpServer, McpServerOptions, McpServerTransport } from './mcp/server/index.js';
export { mcpServer } from './mcp/server/index.js';
export type { AiSdkModelsOptions } from './models/ai-sdk/options.js';
export { aiSdkModels } from './models/ai-sdk/options.js';
export type { AnthropicCompatibleOptions, AnthropicModelEntry, AnthropicRequestOptions } from './models/anthropic.js';
export { anthropicCompatible } from './models/anthropic.js';
export type { ModelCatalog } from './models/catalog.js';
export type { ContentPart } from './models/content-parts.js';
export type { ModuleAdapterOptions } from './models/module.js';
export { moduleAdapter } from './models/module.js';
export type { OpenAICompatibleOptions } from './models/openai.js';
export { openAICompatible } from './models/openai.js';
export type { ModelEntry, RequestOptions, RetryOptions, ToolChoice } from './models/request-options.js';
export type { ScriptedOptions, ScriptedScript, ScriptedTurn } from './models/scripted.js';
export { scriptedModels } from './models/scripted.js';
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
} from './models/types.js';
export type { QueueRunnerConfig, QueueRunnerOptions, RunnerChoice } from './queue/config.js';
export { queueRunner } from './queue/config.js';
export type { AsyncDisposer } from './runtime/async-plugins.js';
export type {
  Budget,
  BudgetKind,
  Limits,
  ProviderLimits,
  QueueOrder,
  SchedulerStats,
  SchedulerView,
} from './scheduler/types.js';
export { fileSessions } from './sessions/jsonl.js';
export type { MemorySessionOptions } from './sessions/memory.js';
export { memorySessions } from './sessions/memory.js';
export type { RetainPolicy } from './sessions/retention.js';
export { forkProvider, inlineProvider, spawnProvider } from './subagents/providers.js';
export type {
  ContinuableSpec,
  CreateChildOptions,
  Job,
  JobStatus,
  ProviderContext,
  ReportDelivery,
  ReportOptions,
  SubagentCapabilities,
  SubagentEndEvent,
  SubagentProvider,
  SubagentResult,
  SubagentRun,
  SubagentRuntime,
  SubagentStartEvent,
  SubagentStartRequest,
} from './subagents/types.js';
export type { Meter, TelemetryOptions, Tracer, TracerProvider } from './telemetry/options.js';
export type { ToolDeclaration } from './tools/define-tool.js';
export { defineTool } from './tools/define-tool.js';
export type { HookedToolCall, HookedToolResult, ToolCallShortCircuit, ToolHooks } from './tools/hooks.js';
export type {
  AdmittedEvent,
  Agent,
  AgentEventsOptions,
  AgentStatus,
  AgentStream,
  AssembledPrompt,
  AssistantMessageEvent,
  BroodEvent,
  BroodEventBase,
  BroodEventOf,
  BroodEventsOptions,
  BroodEventType,
  BudgetExceededEvent,
  CodeMode,
  CodeResourceLimits,
  Disposer,
  JsonSchemaObject,
  LaggedEvent,
  ModelRoute,
  PromptContext,
  PromptRegistry,
  PromptSection,
  QueuedEvent,
  RecoveredEvent,
  RecoveredTurn,
  RecoverOptions,
  RunOptions,
  SendOptions,
  SessionEvent,
  SessionHeader,
  SessionStore,
  StopReason,
  SubagentProgress,
  SubagentReportEvent,
  SubagentRunEndEvent,
  SubagentRunStartEvent,
  TextDeltaEvent,
  ThrottledEvent,
  ToolCallRequest,
  ToolContext,
  ToolDefinition,
  ToolEndEvent,
  ToolFilter,
  ToolRegistry,
  ToolResult,
  ToolSchema,
  ToolStartEvent,
  ToolView,
  TurnEndEvent,
  TurnMetadata,
  TurnResult,
  TurnStartEvent,
  UIMessageChunk,
  UIMessageStreamResponseInit,
  Usage,
  UsageNode,
} from './types.js';
