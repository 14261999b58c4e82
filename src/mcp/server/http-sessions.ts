/**
 * The live MCP sessions of `brood mcp --http`: each one transport and the mcpServer serving it. A
 * session leaves the table — its server closed, which cancels its calls and tasks — when the client
 * DELETEs it, when its transport closes, or when it has had no request open for `idleMs`. At most
 * `max` sessions live at once (a slot is taken when `initialize` arrives, before the session has an id).
 */
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { BroodMcpServer } from './index.js';

/** Schedules `callback` after `ms`; returns its cancel. Tests inject one they fire by hand. */
export type IdleTimer = (callback: () => void, ms: number) => () => void;

export const REAL_IDLE_TIMER: IdleTimer = (callback, ms) => {
  const timer = setTimeout(callback, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

export interface HttpSessionsOptions {
  max: number;
  idleMs: number;
  timer: IdleTimer;
  log: (line: string) => void;
}

export interface HttpSession {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: BroodMcpServer;
}

interface Entry extends HttpSession {
  id: string | undefined;
  open: number;
  cancelIdle: (() => void) | undefined;
  closing: Promise<void> | undefined;
}

export class HttpSessions {
  readonly #options: HttpSessionsOptions;
  readonly #entries = new Set<Entry>();
  readonly #byId = new Map<string, Entry>();

  constructor(options: HttpSessionsOptions) {
    this.#options = options;
  }

  /** Live sessions, those still being initialized included. */
  get size(): number {
    return this.#entries.size;
  }

  get full(): boolean {
    return this.#entries.size >= this.#options.max;
  }

  /** Takes a slot for a session being initialized; its transport's close ends it. */
  open(transport: StreamableHTTPServerTransport, server: BroodMcpServer): HttpSession {
    const entry: Entry = { transport, server, id: undefined, open: 0, cancelIdle: undefined, closing: undefined };
    this.#entries.add(entry);
    return entry;
  }

  /** The session got its id (initialize succeeded): requests find it by that id from now on. */
  named(session: HttpSession, id: string): void {
    const entry = session as Entry;
    entry.id = id;
    if (this.#entries.has(entry)) this.#byId.set(id, entry);
  }

  get(id: string): HttpSession | undefined {
    return this.#byId.get(id);
  }

  /** A request of the session started: it is not idle until every open request has ended. */
  begin(session: HttpSession): void {
    const entry = session as Entry;
    entry.open += 1;
    entry.cancelIdle?.();
    entry.cancelIdle = undefined;
  }

  end(session: HttpSession): void {
    const entry = session as Entry;
    entry.open -= 1;
    if (entry.open > 0 || !this.#entries.has(entry)) return;
    entry.cancelIdle = this.#options.timer(() => {
      this.#options.log(
        `brood mcp: session ${entry.id ?? '(uninitialized)'} idle for ${this.#options.idleMs} ms; closed`,
      );
      void this.close(entry);
    }, this.#options.idleMs);
  }

  /** Removes the session and closes its server (and with it the transport); safe to call again. */
  close(session: HttpSession): Promise<void> {
    const entry = session as Entry;
    if (entry.closing !== undefined) return entry.closing;
    this.#entries.delete(entry);
    if (entry.id !== undefined) this.#byId.delete(entry.id);
    entry.cancelIdle?.();
    entry.cancelIdle = undefined;
    // Set before the server closes: its transport's close comes back here and must find it closing.
    entry.closing = Promise.resolve()
      .then(() => entry.server.close())
      .catch((error: unknown) => {
        this.#options.log(
          `brood mcp: closing session ${entry.id ?? '(uninitialized)'} failed: ${(error as Error).message}`,
        );
      });
    return entry.closing;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.#entries].map((entry) => this.close(entry)));
  }
}
