/**
 * The SDK's TaskStore over the served delegations: a task is a background job of the runtime, so
 * nothing is stored twice. Its status and result are read from the job; tasks/cancel (which the SDK
 * turns into updateTaskStatus('cancelled')) kills the job. Records live until the server closes
 * (ttl null): the job table keeps them that long anyway.
 */
import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { ErrorCode, McpError, type Result, type Task } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULTS } from '../../defaults.js';
import { type ServedDelegations, type ServedTask, taskStatus } from './delegations.js';
import { jobResult } from './results.js';

export class JobTaskStore implements TaskStore {
  readonly #delegations: ServedDelegations;

  constructor(delegations: ServedDelegations) {
    this.#delegations = delegations;
  }

  /** Called by `delegate` after the job is registered; `context.taskId` is the job's id. */
  async createTask(params: CreateTaskOptions): Promise<Task> {
    const id = params.context?.taskId;
    const served = typeof id === 'string' ? this.#delegations.task(id) : undefined;
    if (served === undefined) throw new McpError(ErrorCode.InternalError, 'a task is created only for a started job');
    return toTask(served);
  }

  async getTask(taskId: string): Promise<Task | null> {
    const served = this.#delegations.task(taskId);
    return served === undefined ? null : toTask(served);
  }

  /** Results are the job's own; nothing to store. */
  async storeTaskResult(): Promise<void> {}

  async getTaskResult(taskId: string): Promise<Result> {
    const served = this.#require(taskId);
    await served.job.done.catch(() => undefined);
    return jobResult(served.job, served.cancelled);
  }

  async updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    this.#require(taskId);
    if (status === 'cancelled') this.#delegations.cancelTask(taskId);
  }

  async listTasks(): Promise<{ tasks: Task[] }> {
    return { tasks: this.#delegations.tasks().map(toTask) };
  }

  #require(taskId: string): ServedTask {
    const served = this.#delegations.task(taskId);
    if (served === undefined) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
    return served;
  }
}

function toTask(served: ServedTask): Task {
  const status = taskStatus(served);
  const task: Task = {
    taskId: served.id,
    status,
    ttl: null,
    createdAt: served.createdAt.toISOString(),
    lastUpdatedAt: served.lastUpdatedAt.toISOString(),
    pollInterval: DEFAULTS.mcpServer.taskPollIntervalMs,
  };
  if (status === 'failed' && served.job.result?.diagnostic) task.statusMessage = served.job.result.diagnostic;
  if (status === 'cancelled') task.statusMessage = 'cancelled';
  return task;
}
