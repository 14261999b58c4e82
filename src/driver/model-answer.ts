/**
 * The edges of one model request in the loop: what the adapter is given beyond the conversation (a
 * governed request's slot and retry gate, the turn's cancellation) and what its answer, or its
 * failure, becomes.
 */
import { errorMessage } from '../errors.js';
import { withCancellation } from '../models/cancellation.js';
import type { ModelFinish, ModelRequest, ModelResponse } from '../models/types.js';
import type { SessionEventDataMap } from '../sessions/event-types.js';
import type { ToolResult } from '../types.js';
import type { LazyAbortController } from '../util/lazy-abort.js';
import type { Admission } from './admission.js';
import { checkModelResponse } from './response-check.js';

/**
 * Completes the adapter's options: optional keys only when set (no object made per request to
 * spread). An adapter that sends at the slot itself gets the slot; any other only the retry gate.
 */
export function withAdmission(
  options: Omit<ModelRequest, 'signal'>,
  admission: Admission | undefined,
  atSend: boolean,
  cancel: LazyAbortController,
): ModelRequest {
  if (admission !== undefined && atSend) {
    options.atSlot = admission.atSlot;
    options.retryGate = admission.readmit;
    if (admission.onWrite !== undefined) options.onWrite = admission.onWrite;
  } else if (admission !== undefined) options.retryGate = admission.retryGate;
  return withCancellation(options, cancel);
}

/** An adapter's answer as the loop takes it: a response that breaks the shape ends the request `error`. */
export function answerOf(raw: unknown): ModelResponse {
  const checked = checkModelResponse(raw);
  return checked.ok ? checked.response : errorResponse(checked.reason);
}

/** A request that threw (and was not aborted) ends `error`, its message the diagnostic. */
export function failedResponse(error: unknown): ModelResponse {
  return errorResponse(errorMessage(error));
}

function errorResponse(diagnostic: string): ModelResponse {
  return { text: '', toolCalls: [], finish: 'error', usage: { inputTokens: 0, outputTokens: 0 }, diagnostic };
}

/** The logged `assistant/message` of an answer, its keys in the logged order. */
export function assistantData(response: ModelResponse, finish: ModelFinish): SessionEventDataMap['assistant/message'] {
  return {
    text: response.text,
    toolCalls: response.toolCalls,
    usage: response.usage,
    finish,
    ...(response.reasoning === undefined ? {} : { reasoning: response.reasoning }),
    // What the adapter could not do for an answer it still gave (an option the model cannot take).
    ...(response.diagnostic === undefined || finish === 'error' ? {} : { diagnostic: response.diagnostic }),
  };
}

/** The result of a call that never runs (the step limit, a truncated response): the history stays well-formed. */
export function notRunResult(message: string): ToolResult {
  return { isError: true, content: `Error: ${message}`, error: { message } };
}
