/**
 * A loopback OpenAI-compatible Chat Completions server for CLI and example tests: it streams SSE
 * chunks (`data: {...}` … `data: [DONE]`) like a real endpoint, asks for one tool call when told to
 * and the tool is offered, then answers from the tool result.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackOptions {
  /** Requested on the first request when the tool is offered. Arguments are split over two chunks. */
  toolCall?: { name: string; arguments: Record<string, unknown> };
  /** Final answer; receives the last tool result's content (if any). */
  answer: (toolContent: string | undefined) => string;
  /** Respond with this HTTP status instead (e.g. 500) to exercise failures. */
  status?: number;
}

export interface LoopbackModel {
  baseURL: string;
  requests: { headers: IncomingMessage['headers']; body: ChatBody }[];
  close(): Promise<void>;
}

interface ChatBody {
  model: string;
  stream: boolean;
  messages: { role: string; content: string | null }[];
  tools?: { function: { name: string } }[];
}

export async function startLoopbackModel(options: LoopbackOptions): Promise<LoopbackModel> {
  const requests: LoopbackModel['requests'] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(raw) as ChatBody;
      requests.push({ headers: req.headers, body });
      if (options.status !== undefined || req.url !== '/v1/chat/completions') {
        res
          .writeHead(options.status ?? 404, { 'content-type': 'application/json' })
          .end('{"error":{"message":"loopback failure"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const chunk of replyChunks(body, options)) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function replyChunks(body: ChatBody, options: LoopbackOptions): unknown[] {
  const lastTool = [...body.messages].reverse().find((m) => m.role === 'tool');
  const offered = body.tools?.some((t) => t.function.name === options.toolCall?.name) ?? false;
  const usage = { choices: [], usage: { prompt_tokens: 40, completion_tokens: 12 } };
  if (options.toolCall && offered && lastTool === undefined) {
    const args = JSON.stringify(options.toolCall.arguments);
    const half = Math.floor(args.length / 2);
    const call = (fn: Record<string, string>, extra: Record<string, unknown> = {}) =>
      choice({ tool_calls: [{ index: 0, ...extra, function: fn }] });
    return [
      call({ name: options.toolCall.name, arguments: args.slice(0, half) }, { id: 'call_loop_1', type: 'function' }),
      call({ arguments: args.slice(half) }),
      choice({}, 'tool_calls'),
      usage,
    ];
  }
  const text = options.answer(lastTool?.content ?? undefined);
  const cut = Math.ceil(text.length / 2);
  return [
    choice({ role: 'assistant', content: text.slice(0, cut) }),
    choice({ content: text.slice(cut) }),
    choice({}, 'stop'),
    usage,
  ];
}

function choice(delta: Record<string, unknown>, finish: string | null = null): unknown {
  return {
    id: 'chatcmpl-loop',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}
