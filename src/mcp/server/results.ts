/**
 * CallToolResults of served calls. A failure is an `isError` result, never a protocol error: its text
 * starts with the brood error code when there is one (`[INVALID_ARGS] …`), and a child that did not
 * complete reads as the delegation's headline (`subagent run failed …`).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { failureMessage } from '../../delegation/render.js';
import { errorMessage } from '../../errors.js';
import type { Job } from '../../subagents/types.js';
import type { Outcome } from './delegations.js';

export function outcomeResult(outcome: Outcome): CallToolResult {
  if (outcome.structured === undefined) {
    const result: CallToolResult = { content: [{ type: 'text', text: outcome.text }] };
    if (outcome.childId !== undefined) result._meta = { 'brood/childId': outcome.childId };
    return result;
  }
  const json = JSON.stringify(outcome.structured);
  const result: CallToolResult = { content: [{ type: 'text', text: json }] };
  // MCP's structuredContent is an object; other JSON values are carried by the text alone.
  if (isRecord(outcome.structured)) result.structuredContent = outcome.structured;
  return result;
}

export function errorResult(error: unknown): CallToolResult {
  const code = (error as { code?: unknown } | null)?.code;
  const message = errorMessage(error);
  const text = typeof code === 'string' ? `[${code}] ${message}` : message;
  const result: CallToolResult = { content: [{ type: 'text', text }], isError: true };
  if (typeof code === 'string') result._meta = { 'brood/errorCode': code };
  return result;
}

/** A finished task's result: the job's output, or its failure as the foreground call would have said it. */
export function jobResult(job: Job, cancelled: boolean): CallToolResult {
  const result = job.result;
  if (!cancelled && job.status === 'completed' && result !== undefined) {
    return outcomeResult(
      result.structured === undefined
        ? { text: result.output }
        : { text: result.output, structured: result.structured },
    );
  }
  if (result === undefined) {
    return errorResult({ code: 'ABORTED', message: 'the task was cancelled before its subagent ran' });
  }
  const message = failureMessage(cancelled ? { ...result, stopReason: 'aborted' } : result);
  return cancelled || result.stopReason === 'aborted'
    ? errorResult({ code: 'ABORTED', message })
    : errorResult(new Error(message));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
