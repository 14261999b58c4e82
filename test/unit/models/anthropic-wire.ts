/** Messages API event builders for the loopback server (the shapes Anthropic's API streams). */
type Frame = { event: string; data: Record<string, unknown> };

const frame = (type: string, data: Record<string, unknown> = {}): Frame => ({ event: type, data: { type, ...data } });

export const messageStart = (usage: Record<string, number> = { input_tokens: 0, output_tokens: 1 }): Frame =>
  frame('message_start', {
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [],
      model: 'claude-test',
      stop_reason: null,
      stop_sequence: null,
      usage,
    },
  });
export const textStart = (index: number, text = ''): Frame =>
  frame('content_block_start', { index, content_block: { type: 'text', text } });
export const toolStart = (index: number, id: string, name: string): Frame =>
  frame('content_block_start', { index, content_block: { type: 'tool_use', id, name, input: {} } });
export const thinkingStart = (index: number): Frame =>
  frame('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
export const textDelta = (index: number, text: string): Frame =>
  frame('content_block_delta', { index, delta: { type: 'text_delta', text } });
export const jsonDelta = (index: number, partial_json: string): Frame =>
  frame('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
export const thinkingDelta = (index: number, thinking: string): Frame =>
  frame('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } });
export const signatureDelta = (index: number, signature: string): Frame =>
  frame('content_block_delta', { index, delta: { type: 'signature_delta', signature } });
export const blockStop = (index: number): Frame => frame('content_block_stop', { index });
export const messageDelta = (stop_reason: string, usage: Record<string, number> = { output_tokens: 1 }): Frame =>
  frame('message_delta', { delta: { stop_reason, stop_sequence: null }, usage });
export const messageStop = (): Frame => frame('message_stop');
export const ping = (): Frame => frame('ping');
export const errorEvent = (message: string): Frame => frame('error', { error: { type: 'overloaded_error', message } });

/** A whole streamed text answer. */
export const textStream = (text: string, stop = 'end_turn'): Frame[] => [
  messageStart(),
  textStart(0),
  textDelta(0, text),
  blockStop(0),
  messageDelta(stop),
  messageStop(),
];

/** A non-streamed `message` body. */
export const message = (
  content: Record<string, unknown>[],
  stop_reason: string,
  usage: Record<string, number> = { input_tokens: 1, output_tokens: 1 },
) => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content,
  stop_reason,
  stop_sequence: null,
  usage,
});
