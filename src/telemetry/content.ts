/**
 * What `captureContent` records, in the shapes of the OpenTelemetry GenAI semantic conventions
 * (gen-ai-system-instructions.json, gen-ai-input-messages.json, gen-ai-output-messages.json): each a
 * JSON string on the chat span. Only ever called with capture on.
 *
 * A chat span's input is the model history the driver sent. The parent keeps a mirror of that history
 * (the agent's `history`), updated as each batch of the driver's events arrives, before the batch is
 * logged: so when a batch's `model/request` is read here, the mirror already holds what the events
 * after it in the same batch added. `sentLengths` undoes that by counting those additions, so nothing
 * about the prompt has to cross the thread boundary.
 */
import type { Attributes } from '@opentelemetry/api';
import type { ChatMessage, ModelFinish, ToolCallRecord } from '../models/types.js';
import { messagesTaken, parsedToolArguments } from '../sessions/event-types.js';
import type { SessionEvent } from '../types.js';

type TextPart = { type: 'text'; content: string };
type ToolCallPart = { type: 'tool_call'; id: string; name: string; arguments: unknown };
type ToolCallResponsePart = { type: 'tool_call_response'; id: string; response: string };
type Part = TextPart | ToolCallPart | ToolCallResponsePart;
type InputMessage = { role: 'user' | 'assistant' | 'tool'; parts: Part[] };

/** The conventions' finish reasons for brood's (`refusal` is the provider's content filter). */
const FINISH_REASONS: Record<ModelFinish, string> = {
  stop: 'stop',
  'tool-calls': 'tool_call',
  'max-tokens': 'length',
  refusal: 'content_filter',
  error: 'error',
};

/** With `captureContent`: a request's system instructions and the history it sent, as span attributes. */
export function requestContent(system: string, sent: readonly ChatMessage[] | undefined): Attributes {
  const content: Attributes = {};
  const instructions = systemInstructions(system);
  if (instructions !== undefined) content['gen_ai.system_instructions'] = instructions;
  if (sent !== undefined) content['gen_ai.input.messages'] = inputMessages(sent);
  return content;
}

/** `gen_ai.system_instructions`: the request's system prompt, or undefined when it has none. */
function systemInstructions(system: string): string | undefined {
  return system === '' ? undefined : JSON.stringify([{ type: 'text', content: system }]);
}

/** `gen_ai.input.messages`: the history a request sent, oldest first. */
function inputMessages(history: readonly ChatMessage[]): string {
  return JSON.stringify(history.map(inputMessage));
}

/** `gen_ai.output.messages`: the one assistant message a request was answered with. */
export function outputMessages(answer: { text: string; toolCalls: ToolCallRecord[]; finish: ModelFinish }): string {
  return JSON.stringify([
    {
      role: 'assistant',
      parts: assistantParts(answer.text, answer.toolCalls),
      finish_reason: FINISH_REASONS[answer.finish],
    },
  ]);
}

function inputMessage(message: ChatMessage): InputMessage {
  switch (message.role) {
    case 'user':
      return { role: 'user', parts: [{ type: 'text', content: message.text }] };
    case 'assistant':
      return { role: 'assistant', parts: assistantParts(message.text, message.toolCalls) };
    case 'tool':
      return { role: 'tool', parts: [{ type: 'tool_call_response', id: message.callId, response: message.content }] };
  }
}

function assistantParts(text: string, toolCalls: readonly ToolCallRecord[]): Part[] {
  const parts: Part[] = text === '' ? [] : [{ type: 'text', content: text }];
  for (const call of toolCalls)
    parts.push({ type: 'tool_call', id: call.callId, name: call.name, arguments: parsedToolArguments(call.arguments) });
  return parts;
}

/**
 * For each event of a logged batch, how long the history the driver had sent was at that event:
 * `mirrorLength` (the mirror after the whole batch) less what this event and the ones after it added.
 */
export function sentLengths(stamped: readonly SessionEvent[], mirrorLength: number): number[] {
  const lengths = new Array<number>(stamped.length);
  let length = mirrorLength;
  for (let index = stamped.length - 1; index >= 0; index--) {
    length -= messagesAdded(stamped[index] as SessionEvent);
    lengths[index] = Math.max(0, length);
  }
  return lengths;
}

/** How many messages an event added to the parent's mirror of the history (see TurnLedger). */
function messagesAdded(event: SessionEvent): number {
  if (event.type === 'assistant/message' || event.type === 'tool/result') return 1;
  return messagesTaken(event).length;
}
