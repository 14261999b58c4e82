/**
 * The SDK side of mcpServer: one low-level SDK `Server` answering tools/list, tools/call and (through
 * the task store) tasks/get, tasks/result, tasks/list and tasks/cancel. The low-level server, not
 * McpServer, so argument checks stay brood's (INVALID_ARGS results) and a tool's schema is plain JSON
 * Schema. Loaded only through `import()`: the SDK is an optional peer.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Brood } from '../../brood.js';
import { DEFAULTS } from '../../defaults.js';
import { listModels } from '../../delegation/list-models-tool.js';
import { errorMessage } from '../../errors.js';
import { broodVersion } from '../../version.js';
import {
  continueArgsSchema,
  delegateArgsSchema,
  inputSchemaOf,
  listModelsArgsSchema,
  parseListModelsArgs,
} from './arguments.js';
import type { Outcome, ServedDelegations } from './delegations.js';
import { errorResult, outcomeResult } from './results.js';
import { JobTaskStore } from './task-store.js';

export interface ServeOptions {
  brood: Brood;
  name: string;
  delegations: ServedDelegations;
}

type Extra = {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number } | undefined;
  sendNotification: (notification: {
    method: 'notifications/progress';
    params: { progressToken: string | number; progress: number; message?: string };
  }) => Promise<void>;
  taskStore?: {
    createTask(params: {
      ttl?: number | null;
      pollInterval?: number;
      context?: Record<string, unknown>;
    }): Promise<unknown>;
  };
};

export function createSdkServer(options: ServeOptions): Server {
  const { delegations } = options;
  const tasks = delegations.tasksSupported;
  const capabilities: ServerCapabilities = { tools: {} };
  if (tasks) capabilities.tasks = { list: {}, cancel: {}, requests: { tools: { call: {} } } };
  const server = new Server(
    { name: options.name, version: broodVersion() },
    {
      capabilities,
      ...(tasks
        ? { taskStore: new JobTaskStore(delegations), defaultTaskPollInterval: DEFAULTS.mcpServer.taskPollIntervalMs }
        : {}),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolList(delegations) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args, task } = request.params;
    const progressToken = request.params._meta?.progressToken;
    const context = extra as unknown as Extra;
    if (task !== undefined) return startTask(delegations, name, args, context, task.ttl);
    return callTool(options, name, args, context, progressToken);
  });
  return server;
}

function toolList(delegations: ServedDelegations): Tool[] {
  const delegate: Tool = {
    name: 'delegate',
    description:
      'Run a subagent on a task and return its final answer. The subagent starts fresh: put everything it ' +
      'needs in prompt. With output_schema its answer is data of that shape (structuredContent).',
    inputSchema: inputSchemaOf(delegateArgsSchema),
    execution: { taskSupport: delegations.tasksSupported ? 'optional' : 'forbidden' },
  };
  const tools = [delegate];
  if (delegations.continuable) {
    delegate.description +=
      ' The subagent keeps its conversation: the answer ends with its child_id, which continue takes.';
    tools.push({
      name: 'continue',
      description: 'Send the next message to a subagent a delegate call started; returns its answer to it.',
      inputSchema: inputSchemaOf(continueArgsSchema),
    });
  }
  if (delegations.modelSelection) {
    tools.push({
      name: 'list_models',
      description:
        'List what a delegated subagent can run on: with no arguments the model providers, with provider ' +
        "that provider's models, with provider and model that model's reasoning efforts and default.",
      inputSchema: inputSchemaOf(listModelsArgsSchema),
      annotations: { readOnlyHint: true },
    });
  }
  return tools;
}

async function callTool(
  options: ServeOptions,
  name: string,
  args: unknown,
  extra: Extra,
  progressToken: string | number | undefined,
): Promise<CallToolResult> {
  try {
    if (name === 'delegate') {
      const outcome: Outcome = await options.delegations.foreground(
        args,
        extra.signal,
        progressSender(extra, progressToken),
      );
      return outcomeResult(outcome);
    }
    if (name === 'continue' && options.delegations.continuable) {
      return outcomeResult(await options.delegations.continue(args, extra.signal));
    }
    if (name === 'list_models' && options.delegations.modelSelection) {
      return { content: [{ type: 'text', text: listModels(options.brood.models, parseListModelsArgs(args)) }] };
    }
    return errorResult({ code: 'UNKNOWN_TOOL', message: `unknown tool '${name}'` });
  } catch (error) {
    return errorResult(error);
  }
}

/** A task's creation either registers the job or fails the request: there is no task to carry an error. */
async function startTask(
  delegations: ServedDelegations,
  name: string,
  args: unknown,
  extra: Extra,
  ttl: number | undefined,
): Promise<{ task: unknown }> {
  if (name !== 'delegate') throw new McpError(ErrorCode.InvalidParams, `tool '${name}' does not run as a task`);
  if (extra.taskStore === undefined) throw new McpError(ErrorCode.InvalidParams, 'this server does not run tasks');
  try {
    const served = await delegations.startTask(args, extra.signal);
    const task = await extra.taskStore.createTask({
      ttl: ttl ?? null,
      pollInterval: DEFAULTS.mcpServer.taskPollIntervalMs,
      context: { taskId: served.id },
    });
    return { task };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const prefix = typeof code === 'string' ? `[${code}] ` : '';
    throw new McpError(ErrorCode.InvalidParams, `${prefix}${errorMessage(error)}`, { code });
  }
}

/** Progress goes out only when the client asked for it with a token; a lost notification is not an error. */
function progressSender(extra: Extra, token: string | number | undefined): ((message: string) => void) | undefined {
  if (token === undefined) return undefined;
  let progress = 0;
  return (message) => {
    progress += 1;
    extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, message } })
      .catch(() => undefined);
  };
}

export type { Transport };
