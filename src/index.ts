// The curated public surface of brood (SPEC §3). Internals are not re-exported wholesale.
export { createBrood } from './brood.js';
export type {
  Brood,
  BroodOptions,
  BroodPlugin,
  CreateAgentOptions,
  ResumeAgentOptions,
  UsageOptions,
} from './brood.js';
export type { RecoveredTurn, RecoverOptions } from './types.js';
export type { Meter, TelemetryOptions, Tracer, TracerProvider } from './telemetry/options.js';
export type {
  AdmittedEvent,
  AgentEventsOptions,
  AssistantMessageEvent,
  BudgetExceededEvent,
  RecoveredEvent,
  BroodEvent,
  BroodEventBase,
  BroodEventOf,
  BroodEventsOptions,
  BroodEventType,
  CodeResourceLimits,
  LaggedEvent,
  QueuedEvent,
  SubagentReportEvent,
  SubagentRunEndEvent,
  SubagentRunStartEvent,
  TextDeltaEvent,
  ThrottledEvent,
  ToolEndEvent,
  ToolStartEvent,
  TurnEndEvent,
  TurnStartEvent,
  UsageNode,
} from './types.js';
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
export { BroodError, ERROR_CODES } from './errors.js';
export type { BroodErrorCode } from './errors.js';
export { defineTool } from './tools/define-tool.js';
export type { ToolDeclaration } from './tools/define-tool.js';
export { scriptedModels } from './models/scripted.js';
export type { ScriptedOptions, ScriptedTurn, ScriptedScript } from './models/scripted.js';
export { openAICompatible } from './models/openai.js';
export type { OpenAICompatibleOptions } from './models/openai.js';
export { anthropicCompatible } from './models/anthropic.js';
export type { AnthropicCompatibleOptions, AnthropicModelEntry, AnthropicRequestOptions } from './models/anthropic.js';
export { moduleAdapter } from './models/module.js';
export type { ModuleAdapterOptions } from './models/module.js';
export { aiSdkModels } from './models/ai-sdk/options.js';
export type { AiSdkModelsOptions } from './models/ai-sdk/options.js';
export type { ModelEntry, RequestOptions, RetryOptions, ToolChoice } from './models/request-options.js';
export type { ModelCatalog } from './models/catalog.js';
export type {
  ModelProviderConfig,
  ModelInfo,
  ModelAdapter,
  ModelRequest,
  ModelResponse,
  ModelFinish,
  ChatMessage,
  ToolCallRecord,
  ReasoningBlock,
} from './models/types.js';
export { spawnProvider, forkProvider, inlineProvider } from './subagents/providers.js';
export { acpProvider } from './acp/client/provider.js';
export type { AcpProvider } from './acp/client/provider.js';
export type { AcpProviderOptions, AcpPermissionPolicy, AcpPermissionRequest } from './acp/client/options.js';
export { subagentTool, jobTools, messageTools } from './delegation/index.js';
export type { SubagentToolConfig } from './delegation/index.js';
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
export { queueRunner } from './queue/config.js';
export type { QueueRunnerConfig, QueueRunnerOptions, RunnerChoice } from './queue/config.js';
export { mcpTools } from './mcp/plugin.js';
export type { McpServer, McpStdioServer, McpHttpServer, McpToolsOptions, McpServerStatus } from './mcp/config.js';
export { mcpServer } from './mcp/server/index.js';
export type { BroodMcpServer, McpServerOptions, McpServerTransport } from './mcp/server/index.js';
export type { AsyncDisposer } from './runtime/async-plugins.js';
export { memorySessions } from './sessions/memory.js';
export type { MemorySessionOptions } from './sessions/memory.js';
export type { RetainPolicy } from './sessions/retention.js';
export { fileSessions } from './sessions/jsonl.js';
export type {
  Agent,
  AgentStatus,
  AgentStream,
  SubagentProgress,
  TurnMetadata,
  UIMessageChunk,
  UIMessageStreamResponseInit,
  AssembledPrompt,
  CodeMode,
  Disposer,
  JsonSchemaObject,
  ModelRoute,
  PromptContext,
  PromptRegistry,
  PromptSection,
  RunOptions,
  SendOptions,
  SessionEvent,
  SessionHeader,
  SessionStore,
  StopReason,
  ToolCallRequest,
  ToolContext,
  ToolDefinition,
  ToolFilter,
  ToolRegistry,
  ToolResult,
  ToolSchema,
  ToolView,
  TurnResult,
  Usage,
} from './types.js';
export type {
  Budget,
  BudgetKind,
  Limits,
  ProviderLimits,
  QueueOrder,
  SchedulerStats,
  SchedulerView,
} from './scheduler/types.js';
