/**
 * A real HTTP server on 127.0.0.1 for adapter tests. Real sockets on purpose: adapters also run inside
 * worker threads, which in-process HTTP mocks (nock, msw, undici MockAgent) never reach.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  url: string;
  method: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, seen: Seen) => void;

export interface Loopback {
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  readonly seen: Seen[];
  /** How many connections clients have opened to this server so far. */
  connections(): number;
  /** Answers the next requests in order; a request without a queued handler gets 599. */
  push(...handlers: Handler[]): void;
  /** Answers every request with `fn` when the queue is empty (for multi-request flows). */
  fallback(fn: Handler | undefined): void;
  reset(): void;
  close(): Promise<void>;
}

export async function startLoopback(): Promise<Loopback> {
  let queue: Handler[] = [];
  let otherwise: Handler | undefined;
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const entry: Seen = {
        url: req.url ?? '',
        method: req.method ?? '',
        headers: req.headers,
        body: raw === '' ? {} : (JSON.parse(raw) as Record<string, unknown>),
      };
      seen.push(entry);
      const handler = queue.shift() ?? otherwise;
      if (handler === undefined) return void res.writeHead(599).end('no handler');
      handler(req, res, entry);
    });
  });
  let connections = 0;
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    seen,
    connections: () => connections,
    push: (...handlers) => void queue.push(...handlers),
    fallback: (fn) => {
      otherwise = fn;
    },
    reset: () => {
      queue = [];
      otherwise = undefined;
      seen.length = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A port nothing listens on (bound, then released). */
export async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** SSE frames: strings are sent as raw data, objects as JSON; `event` names the frame (Anthropic style). */
export function sseFrames(
  frames: (string | { event?: string; data: unknown })[],
  opts: { end?: boolean } = {},
): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const frame of frames) res.write(frameText(frame));
    if (opts.end !== false) res.end();
  };
}

export function frameText(frame: string | { event?: string; data: unknown }): string {
  if (typeof frame === 'string') return `data: ${frame}\n\n`;
  const data = typeof frame.data === 'string' ? frame.data : JSON.stringify(frame.data);
  return `${frame.event === undefined ? '' : `event: ${frame.event}\n`}data: ${data}\n\n`;
}

export function json(body: unknown, code = 200, headers: Record<string, string> = {}): Handler {
  return (_req, res) =>
    res.writeHead(code, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

export function status(code: number, body: string, headers: Record<string, string> = {}): Handler {
  return (_req, res) => res.writeHead(code, headers).end(body);
}

/** Sends the frames, then destroys the socket without ending the response (a dropped connection). */
export function dropAfter(frames: (string | { event?: string; data: unknown })[]): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const frame of frames) res.write(frameText(frame));
    // Let the frames leave before the reset, so the client sees data and then a broken stream.
    setTimeout(() => res.socket?.destroy(), 20);
  };
}

/** Writes the first frame, then waits for the client to go away; resolves when the server saw the close. */
export function holdOpen(first: string | { event?: string; data: unknown }): {
  handler: Handler;
  closed: Promise<void>;
} {
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  return {
    closed,
    handler: (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(frameText(first));
      res.on('close', resolveClosed);
    },
  };
}
