/**
 * One live connection to one MCP server through the official SDK client, shared by every agent of
 * the runtime. It owns reconnection: a lost connection (a stdio process that exited, an HTTP server
 * that stopped answering) is retried on the schedule of restart-policy.ts (0.5 s doubling, at most 5
 * attempts in a row, then one attempt per call). While down, calls fail MCP_UNAVAILABLE at once,
 * except that a call arriving during an attempt waits for that attempt's outcome.
 * Loaded only through `await import()`, so the SDK costs nothing to a host that never uses MCP.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { type Clock, systemClock } from '../clock.js';
import { BroodError, errorMessage } from '../errors.js';
import { broodVersion } from '../version.js';
import { describeServer, isStdioServer, type McpHttpServer, type McpServer, type McpServerStatus } from './config.js';
import {
  callFailure,
  describeFailure,
  isClientErrorStatus,
  isNetworkFailure,
  isSessionExpired,
  isTimeout,
  withDeadline,
} from './failures.js';
import { checkingFetch } from './http-answers.js';
import type { McpCallResult } from './render.js';
import { RestartPolicy } from './restart-policy.js';
import { StdioProcessTransport } from './stdio-transport.js';

export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; [key: string]: unknown };
}

export interface ConnectionEvents {
  /** The server's current tool list: after a reconnection and after each list_changed (once live). */
  tools(tools: McpToolInfo[]): void;
  status?(status: McpServerStatus): void;
}

const MAX_LIST_PAGES = 1_000;
const SESSION_END_WAIT_MS = 1_000;

interface Session {
  client: Client;
  transport: Transport;
  stdio: StdioProcessTransport | undefined;
  connectedAt: number;
  /** The transport closed (the SDK told the client): the one sign of a lost connection. */
  closed: boolean;
  /** A list_changed arrived before this session was current and live: relist once it is. */
  changedMeanwhile: boolean;
}

export class McpConnection {
  readonly #server: McpServer;
  readonly #timeoutMs: number;
  readonly #events: ConnectionEvents;
  readonly #label: string;
  #session: Session | undefined;
  #attempt: Promise<Session> | undefined;
  /** Cancels the pending retry. */
  #retryTimer: (() => void) | undefined;
  readonly #clock: Clock;
  readonly #restarts: RestartPolicy;
  #lastFailure = '';
  #live = false;
  #refreshing: Promise<void> | undefined;
  #refreshAgain = false;
  #closed = false;

  constructor(server: McpServer, timeoutMs: number, events: ConnectionEvents, clock: Clock = systemClock) {
    this.#server = server;
    this.#clock = clock;
    this.#restarts = new RestartPolicy(clock.now);
    this.#timeoutMs = timeoutMs;
    this.#events = events;
    this.#label = describeServer(server);
  }

  /** The first connection and tool list; rejects MCP_UNAVAILABLE and leaves no process behind. */
  async open(): Promise<McpToolInfo[]> {
    const { session, tools } = await this.#connect();
    if (this.#closed) {
      await this.#dispose(session);
      throw this.#unavailable('the connection was closed while it was opening');
    }
    this.#session = session;
    return tools;
  }

  /** From now on list_changed updates are delivered (one missed while the first tools registered is replayed). */
  goLive(): void {
    this.#live = true;
    if (this.#session?.changedMeanwhile === true) this.#refresh(this.#session);
  }

  async callTool(name: string, args: unknown, signal: AbortSignal): Promise<McpCallResult> {
    const session = await this.#usableSession();
    try {
      return await this.#call(session, name, args, signal);
    } catch (error) {
      if (!isSessionExpired(error) || signal.aborted) throw this.#callError(session, name, error, signal);
      // HTTP 404 for our session id: the server restarted and forgot us. The request was rejected
      // unprocessed, so a new session and one retry are safe (the MCP spec asks clients to re-initialize).
      this.#lost(session, 'the HTTP session expired (404)', { retryNow: true });
      const fresh = await this.#usableSession();
      try {
        return await this.#call(fresh, name, args, signal);
      } catch (retryError) {
        throw this.#callError(fresh, name, retryError, signal);
      }
    }
  }

  /** Ends the client and (stdio) the process; resolves once the process has exited. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#retryTimer?.();
    this.#retryTimer = undefined;
    const attempt = this.#attempt;
    if (attempt !== undefined) await attempt.catch(() => undefined);
    const session = this.#session;
    this.#session = undefined;
    if (session === undefined) return;
    if (session.transport instanceof StreamableHTTPClientTransport) await endHttpSession(session.transport);
    await this.#dispose(session);
  }

  #call(session: Session, name: string, args: unknown, signal: AbortSignal): Promise<McpCallResult> {
    const params = { name, arguments: (args ?? {}) as Record<string, unknown> };
    // The SDK sends notifications/cancelled for the request when the signal aborts or the deadline passes.
    return withDeadline(
      this.#timeoutMs,
      signal,
      (options) => session.client.callTool(params, undefined, options) as Promise<McpCallResult>,
    );
  }

  async #usableSession(): Promise<Session> {
    if (this.#closed) throw this.#unavailable('the connection is closed');
    if (this.#session !== undefined) return this.#session;
    if (this.#attempt === undefined && this.#retryTimer !== undefined) {
      throw this.#unavailable(`is down (${this.#lastFailure}); reconnecting`);
    }
    try {
      // An attempt under way is awaited; after the automatic attempts gave up, each call makes one.
      return await (this.#attempt ?? this.#reconnect());
    } catch (error) {
      throw error instanceof BroodError ? error : this.#unavailable(errorMessage(error));
    }
  }

  #reconnect(): Promise<Session> {
    this.#restarts.attempt();
    const attempt = (async () => {
      try {
        const { session, tools } = await this.#connect();
        if (this.#closed) {
          await this.#dispose(session);
          throw this.#unavailable('the connection is closed');
        }
        this.#session = session;
        // The server may have changed its tools while it was away.
        this.#events.tools(tools);
        this.#status({ state: 'connected', tools: tools.length });
        if (session.changedMeanwhile && this.#live) this.#refresh(session);
        return session;
      } catch (error) {
        this.#lastFailure = error instanceof BroodError ? error.message : errorMessage(error);
        if (!this.#closed) this.#scheduleRetry();
        throw error;
      } finally {
        this.#attempt = undefined;
      }
    })();
    this.#attempt = attempt;
    return attempt;
  }

  #scheduleRetry(): void {
    const delay = this.#restarts.nextDelay();
    if (delay === undefined) {
      this.#status({ state: 'down', error: this.#lastFailure, retryInMs: undefined });
      return;
    }
    this.#status({ state: 'down', error: this.#lastFailure, retryInMs: delay });
    this.#retryTimer = this.#clock.setTimeout(() => {
      this.#retryTimer = undefined;
      this.#reconnect().catch(() => undefined);
    }, delay); // a pending retry alone does not keep the host process alive (Clock)
  }

  /** The session stopped working; `retryNow` skips the backoff (an expired HTTP session, not a dead server). */
  #lost(session: Session, reason: string, options: { retryNow?: boolean } = {}): void {
    if (this.#closed || this.#session !== session) return;
    this.#session = undefined;
    this.#lastFailure = reason;
    void this.#dispose(session);
    if (options.retryNow === true) {
      this.#reconnect().catch(() => undefined);
      return;
    }
    this.#restarts.lost(session.connectedAt);
    this.#scheduleRetry();
  }

  async #connect(): Promise<{ session: Session; tools: McpToolInfo[] }> {
    if (isStdioServer(this.#server)) {
      const stdio = new StdioProcessTransport(this.#server, this.#clock);
      return this.#handshake(stdio, stdio, (error) => `could not be started: ${describeFailure(error)}`);
    }
    const server = this.#server;
    const streamable = new StreamableHTTPClientTransport(new URL(server.url), transportOptions(server));
    try {
      return await this.#handshake(streamable, undefined, (error) => describeFailure(error));
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      if (!isClientErrorStatus(cause)) throw error;
      // A 4xx to the Streamable HTTP POST: an old server that only speaks HTTP+SSE (the SDK's fallback).
      const sse = new SSEClientTransport(new URL(server.url), transportOptions(server));
      return this.#handshake(
        sse,
        undefined,
        (sseError) => `${describeFailure(cause)}; the SSE fallback failed too: ${describeFailure(sseError)}`,
      );
    }
  }

  async #handshake(
    transport: Transport,
    stdio: StdioProcessTransport | undefined,
    describe: (error: unknown) => string,
  ): Promise<{ session: Session; tools: McpToolInfo[] }> {
    const client = new Client({ name: 'brood', version: broodVersion() }, { capabilities: {} });
    const session: Session = {
      client,
      transport,
      stdio,
      connectedAt: Number.NaN,
      closed: false,
      changedMeanwhile: false,
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.#listChanged(session));
    client.onclose = () => {
      session.closed = true;
      this.#lost(session, stdio === undefined ? 'the connection closed' : `the server process ${stdio.describeExit()}`);
    };
    // Deferred: a request's own failure (e.g. the 404 a call handles by re-initializing and retrying)
    // reaches the transport's onerror first; the caller must see it before the session is torn down.
    client.onerror = (error) => void setImmediate(() => this.#transportError(session, error));
    try {
      await withDeadline(this.#timeoutMs, undefined, (options) => client.connect(transport, options));
      const tools = await this.#listAll(session);
      session.connectedAt = this.#restarts.time;
      return { session, tools };
    } catch (error) {
      await this.#dispose(session);
      // The SDK's rejection of a request because the process went away (not a spawn error, nor an
      // error reply the server sent while it was up).
      const exited = stdio !== undefined && session.closed && error instanceof McpError;
      const what = exited ? `the server process ${stdio.describeExit()}` : describe(error);
      throw this.#unavailable(
        isTimeout(error) ? `did not answer the handshake within ${this.#timeoutMs} ms` : what,
        error,
      );
    }
  }

  /** Errors outside any request: an HTTP server that restarted (404 on the event stream) or is gone. */
  #transportError(session: Session, error: Error): void {
    if (this.#session !== session) return;
    if (isSessionExpired(error)) this.#lost(session, 'the HTTP session expired (404)', { retryNow: true });
    // The SDK's event-stream reconnection gave up: the server is not coming back on its own.
    else if (/Maximum reconnection attempts/.test(error.message)) this.#lost(session, errorMessage(error));
  }

  async #listAll(session: Session): Promise<McpToolInfo[]> {
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await withDeadline(this.#timeoutMs, undefined, (options) =>
        session.client.listTools(cursor === undefined ? {} : { cursor }, options),
      );
      tools.push(...(result.tools as McpToolInfo[]));
      if (result.nextCursor === undefined || result.nextCursor === cursor) return tools;
      cursor = result.nextCursor;
    }
    return tools;
  }

  #listChanged(session: Session): void {
    if (this.#closed) return;
    if (this.#session !== session || !this.#live) {
      // Still opening (the first list is being fetched or registered): relist once it is current.
      session.changedMeanwhile = true;
      return;
    }
    this.#refresh(session);
  }

  /** One tools/list at a time; notifications during a refresh fold into one more refresh. */
  #refresh(session: Session): void {
    if (this.#refreshing !== undefined) {
      this.#refreshAgain = true;
      return;
    }
    this.#refreshing = (async () => {
      do {
        this.#refreshAgain = false;
        session.changedMeanwhile = false;
        const tools = await this.#listAll(session);
        if (this.#closed || this.#session !== session) return;
        this.#events.tools(tools);
      } while (this.#refreshAgain);
    })()
      // A failed refresh keeps the current tools; a lost connection relists when it comes back.
      .catch(() => undefined)
      .finally(() => (this.#refreshing = undefined));
  }

  #callError(session: Session, name: string, error: unknown, signal: AbortSignal): BroodError {
    const what = `${this.#label}, tool "${name}"`;
    if (signal.aborted)
      return new BroodError('ABORTED', `${what}: the call was aborted (the server was sent a cancellation)`, {
        cause: error,
      });
    if (isTimeout(error)) {
      return new BroodError('MCP_ERROR', `${what}: no answer within ${this.#timeoutMs} ms; the call was cancelled`, {
        cause: error,
        details: { server: this.#server.name, tool: name, timeoutMs: this.#timeoutMs },
      });
    }
    // Lost means the transport closed (or the process exited before the request was even written,
    // which fails the write); never a JSON-RPC error code, which the server may have sent itself.
    const gone = session.closed || this.#session !== session || session.stdio?.hasExited === true;
    if (gone || isNetworkFailure(error)) {
      const reason =
        session.stdio === undefined ? describeFailure(error) : `the server process ${session.stdio.describeExit()}`;
      this.#lost(session, reason);
      return new BroodError('MCP_UNAVAILABLE', `${what}: the connection was lost during the call (${reason})`, {
        cause: error,
        details: { server: this.#server.name, tool: name },
      });
    }
    return callFailure(what, error, { server: this.#server.name, tool: name });
  }

  #unavailable(what: string, cause?: unknown): BroodError {
    return new BroodError('MCP_UNAVAILABLE', `${this.#label} ${what}`, {
      details: { server: this.#server.name },
      ...(cause === undefined ? {} : { cause }),
    });
  }

  #status(status: McpServerStatus): void {
    try {
      this.#events.status?.(status);
    } catch {
      // An observer cannot break the connection.
    }
  }

  async #dispose(session: Session): Promise<void> {
    session.client.onclose = undefined;
    session.client.onerror = undefined;
    await session.client.close().catch(() => undefined);
    // client.close() closes the transport; for stdio this waits for the process to exit.
    await session.stdio?.close();
  }
}

/**
 * Streamable HTTP clients should DELETE their session when done. Bounded: a server that does not
 * answer cannot hold up close(); closing the transport afterwards aborts the request.
 */
async function endHttpSession(transport: StreamableHTTPClientTransport): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, SESSION_END_WAIT_MS)));
  await Promise.race([transport.terminateSession().catch(() => undefined), bound]);
  clearTimeout(timer);
}

/** Both HTTP transports read answers through checkingFetch (a malformed answer fails its call at once). */
function transportOptions(server: McpHttpServer): {
  requestInit?: RequestInit;
  fetch: ReturnType<typeof checkingFetch>;
} {
  const fetch = checkingFetch();
  return server.headers === undefined ? { fetch } : { requestInit: { headers: server.headers }, fetch };
}
