// The curated public surface of brood (SPEC §3). A module is exported whole only when all of it is
// public and its header says so (brood.ts, approvals/types.ts, scheduler/types.ts, models/public.ts).

export type { AcpPermissionPolicy, AcpPermissionRequest, AcpProviderOptions } from './acp/client/options.js';
export type { AcpProvider } from './acp/client/provider.js';
export { acpProvider } from './acp/client/provider.js';
export type { HistoryMessage, HistoryToolCall } from './agents/given-history.js';
export type * from './approvals/types.js';
export * from './brood.js';
export type { SubagentToolConfig } from './delegation/index.js';
export { jobTools, messageTools, subagentTool } from './delegation/index.js';
export type { BroodErrorCode } from './errors.js';
export { BroodError, ERROR_CODES } from './errors.js';
export type { McpHttpServer, McpServer, McpServerStatus, McpStdioServer, McpToolsOptions } from './mcp/config.js';
export { mcpTools } from './mcp/plugin.js';
export type { BroodMcpServer, McpServerOptions, McpServerTransport } from './mcp/server/index.js';
export { mcpServer } from './mcp/server/index.js';
// Model providers and the adapter contract: the models folder curates them (src/models/public.ts).
export * from './models/public.js';
export type { QueueRunnerConfig, QueueRunnerOptions, RunnerChoice } from './queue/config.js';
export { queueRunner } from './queue/config.js';
export type { AsyncDisposer } from './runtime/async-plugins.js';
export type * from './scheduler/types.js';
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
