/**
 * A loopback OpenAI-compatible Chat Completions server for CLI and example tests: it streams SSE
 * chunks (`data: {...}` … `data: [DONE]`) like a real endpoint, asks for one tool call when told to
 * and the tool is offered, then answers from the tool result. The answer can be paced (many small
 * chunks with a pause between them) and chosen conversations can be failed, e.g. one child's.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface LoopbackOptions {
  /** Requested on the first request when the tool is offered. Arguments are split over two chunks. */
  toolCall?: { name: string; arguments: Record<string, unknown> };
  /** Final answer; receives the last tool result's content (if any). */
  answer: (toolContent: string | undefined) => string;
  /** Respond with this HTTP status instead (e.g. 500) to exercise failures. */
  status?: number;
  /** Respond 500 to conversations whose first user message this accepts (e.g. one child's). */
  failWhen?: (firstUserMessage: string) => boolean;
  /** Stream the answer `chars` code points at a time, `delayMs` apart (default: two chunks at once). */
  pace?: { chars: number; delayMs: number };
  /** Wait this long before answering (a provider's latency); the request counts as in flight meanwhile. */
  latencyMs?: number;
  /**
   * The server's own limits: beyond `concurrent` in flight, for the first `throttleFirst` requests, or
   * for the `throttleArrival`th request to arrive (1-based), 429 + retry-after-ms.
   */
  limit?: { concurrent?: number; throttleFirst?: number; throttleArrival?: number; retryAfterMs: number };
}

/** What the server saw: the most requests in flight at once, and the 429s it answered. */
export interface LoopbackCounts {
  inFlight: number;
  maxInFlight: number;
  throttled: number;
  /** When each 429 was answered and when each accepted request arrived (performance.now()). */
  throttledAt: number[];
  acceptedAt: number[];
}

export interface LoopbackModel {
  baseURL: string;
  counts: LoopbackCounts;
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
  const counts: LoopbackCounts = { inFlight: 0, maxInFlight: 0, throttled: 0, throttledAt: [], acceptedAt: [] };
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(raw) as ChatBody;
      requests.push({ headers: req.headers, body });
      if (refusedByLimit(res, counts, options.limit)) return;
      counts.inFlight += 1;
      counts.maxInFlight = Math.max(counts.maxInFlight, counts.inFlight);
      counts.acceptedAt.push(performance.now());
      res.on('close', () => (counts.inFlight -= 1));
      const firstUser = body.messages.find((m) => m.role === 'user')?.content ?? '';
      const failed = options.status ?? (options.failWhen?.(firstUser) === true ? 500 : undefined);
      if (failed !== undefined || req.url !== '/v1/chat/completions') {
        res
          .writeHead(failed ?? 404, { 'content-type': 'application/json' })
          .end('{"error":{"message":"loopback failure"}}');
        return;
      }
      void sleep(options.latencyMs ?? 0).then(() => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        void streamChunks(res, replyChunks(body, options), options.pace?.delayMs ?? 0);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    counts,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function refusedByLimit(res: ServerResponse, counts: LoopbackCounts, limit: LoopbackOptions['limit']): boolean {
  if (limit === undefined) return false;
  const overConcurrent = limit.concurrent !== undefined && counts.inFlight >= limit.concurrent;
  const early = limit.throttleFirst !== undefined && counts.throttled < limit.throttleFirst;
  const arrival = counts.acceptedAt.length + counts.throttled + 1;
  if (!overConcurrent && !early && arrival !== limit.throttleArrival) return false;
  counts.throttled += 1;
  counts.throttledAt.push(performance.now());
  res
    .writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': String(limit.retryAfterMs) })
    .end('{"error":{"message":"rate limited"}}');
  return true;
}

async function streamChunks(res: ServerResponse, chunks: unknown[], delayMs: number): Promise<void> {
  for (const chunk of chunks) {
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    if (delayMs > 0) await sleep(delayMs);
  }
  res.end('data: [DONE]\n\n');
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
  const [first = '', ...rest] = textChunks(text, options.pace?.chars);
  return [
    choice({ role: 'assistant', content: first }),
    ...rest.map((content) => choice({ content })),
    choice({}, 'stop'),
    usage,
  ];
}

/** By code point, so no chunk ends inside a surrogate pair (real endpoints cut at token boundaries). */
function textChunks(text: string, size: number | undefined): string[] {
  const points = Array.from(text);
  const join = (from: number, to: number): string => points.slice(from, to).join('');
  if (size === undefined)
    return [join(0, Math.ceil(points.length / 2)), join(Math.ceil(points.length / 2), points.length)];
  const chunks: string[] = [];
  for (let i = 0; i < points.length; i += size) chunks.push(join(i, i + size));
  return chunks;
}

function choice(delta: Record<string, unknown>, finish: string | null = null): unknown {
  return {
    id: 'chatcmpl-loop',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}
