/**
 * One ACP agent process and the client connection to it (the SDK's client side over stdio). Sessions
 * are multiplexed on it: updates, permission requests and fs calls are routed to the session's
 * handlers by ACP session id. The process's death — an exit, a signal, a protocol fault — is one
 * PROVIDER_FAILED diagnostic (exit code or signal, then its last stderr lines) that every pending call
 * rejects with; nothing the process does can throw into the host.
 */
import type { ChildProcess } from 'node:child_process';
import type * as Acp from '@agentclientprotocol/sdk';
import { BroodError, errorMessage } from '../../errors.js';
import { signalOwned, spawnOwned } from '../../util/owned-process.js';
import { frameStdio } from './framing.js';
import { type FsEvent, fsHandlers } from './fs.js';
import type { ResolvedAcpOptions } from './options.js';

type AcpModule = typeof import('@agentclientprotocol/sdk');

/** What a session's owner (one brood child) answers for its ACP session. */
export interface SessionHandlers {
  update(update: Acp.SessionUpdate): void;
  permission(request: Acp.RequestPermissionRequest): Promise<Acp.RequestPermissionResponse>;
  fs(event: FsEvent): void;
}

const STDERR_LINES = 12;
const STDERR_LINE_CHARS = 400;
/** After 'exit', how long to wait for the stdio pipes to close (a grandchild may hold them open). */
const PIPE_DRAIN_MS = 500;
/** Between SIGTERM and SIGKILL when the provider shuts a healthy process down. */
const TERMINATE_GRACE_MS = 2_000;

let sdk: Promise<AcpModule> | undefined;
/** The SDK is loaded on first use only: hosts that never start an ACP child never load it. */
export function loadSdk(): Promise<AcpModule> {
  sdk ??= import('@agentclientprotocol/sdk');
  return sdk;
}

export class AgentProcess {
  readonly pid: number;
  /** Settles (never rejects) with the PROVIDER_FAILED message once the process is unusable. */
  readonly death: Promise<string>;
  agentInfo: { name: string; version?: string } | undefined;
  capabilities: Acp.AgentCapabilities = {};
  private failure: string | undefined;
  private markDead!: (message: string) => void;
  private readonly sessions = new Map<string, SessionHandlers>();
  private readonly stderrTail: string[] = [];
  /** The process exited and nothing holds its pipes any more: nothing of its group is left to signal. */
  private released = false;
  private markReleased!: () => void;
  private readonly releasedPromise = new Promise<void>((resolve) => (this.markReleased = resolve));
  private connection!: Acp.ClientConnection;

  private constructor(
    private readonly acp: AcpModule,
    private readonly child: ChildProcess,
    private readonly options: ResolvedAcpOptions,
  ) {
    this.pid = child.pid ?? -1;
    this.death = new Promise((resolve) => (this.markDead = resolve));
  }

  /** Spawns the agent and runs `initialize`; rejects PROVIDER_FAILED (and leaves no process) when either fails. */
  static async start(options: ResolvedAcpOptions, version: string): Promise<AgentProcess> {
    const acp = await loadSdk();
    const child = spawnOwned(options.command, options.args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
    });
    const spawned = await new Promise<Error | undefined>((resolve) => {
      child.once('spawn', () => resolve(undefined));
      child.once('error', (error) => resolve(error));
    });
    if (spawned) {
      throw new BroodError(
        'PROVIDER_FAILED',
        `cannot start the ACP agent '${options.name}' (${options.command}): ${spawned.message}`,
        { details: { provider: options.name } },
      );
    }
    const agent = new AgentProcess(acp, child, options);
    agent.wire();
    try {
      await agent.initialize(version);
    } catch (error) {
      agent.kill();
      await agent.death;
      throw error;
    }
    return agent;
  }

  get dead(): boolean {
    return this.failure !== undefined;
  }

  get deathMessage(): string | undefined {
    return this.failure;
  }

  async newSession(handlers: SessionHandlers): Promise<string> {
    const response = await this.bounded(
      'session/new',
      this.connection.agent.request('session/new', { cwd: this.options.cwd, mcpServers: [] }),
    );
    if (typeof response?.sessionId !== 'string' || response.sessionId === '')
      throw this.protocolError('session/new answered without a session id');
    this.sessions.set(response.sessionId, handlers);
    return response.sessionId;
  }

  /** `session/load`: the agent replays the history as updates first; `handlers` decides what to keep. */
  async loadSession(sessionId: string, handlers: SessionHandlers): Promise<void> {
    this.sessions.set(sessionId, handlers);
    try {
      await this.bounded(
        'session/load',
        this.connection.agent.request('session/load', { sessionId, cwd: this.options.cwd, mcpServers: [] }),
      );
    } catch (error) {
      this.sessions.delete(sessionId);
      throw error;
    }
  }

  /** `traceHeaders`: the turn's W3C trace context (createBrood telemetry), sent in the prompt's `_meta`. */
  prompt(sessionId: string, text: string, traceHeaders?: Record<string, string>): Promise<Acp.PromptResponse> {
    const meta = traceHeaders === undefined ? {} : { _meta: { ...traceHeaders } };
    return this.untilDeath(
      this.connection.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }], ...meta }),
    );
  }

  cancel(sessionId: string): void {
    if (!this.dead) this.connection.agent.notify('session/cancel', { sessionId }).catch(() => undefined);
  }

  /** Forgets the session; tells the agent when it advertises `session/close`. */
  closeSession(sessionId: string): void {
    if (!this.sessions.delete(sessionId) || this.dead) return;
    if (this.capabilities.sessionCapabilities?.close)
      this.connection.agent.request('session/close', { sessionId }).catch(() => undefined);
  }

  /**
   * Stops the process now (SIGKILL to its process group, so an agent behind a wrapper goes too): a
   * cancellation past its grace, a protocol fault, a failed start.
   */
  kill(reason?: string): void {
    if (reason !== undefined) this.fail(reason);
    if (!this.released) signalOwned(this.child, 'SIGKILL');
  }

  /** Graceful shutdown (provider disposal, brood.close): stdin closed, SIGTERM, SIGKILL after a grace. */
  async terminate(): Promise<void> {
    if (this.released) return;
    this.child.stdin?.end();
    signalOwned(this.child, 'SIGTERM');
    // The whole group gets the grace, not just the direct child (a wrapper dies at once; its agent may not).
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, TERMINATE_GRACE_MS)));
    await Promise.race([this.releasedPromise, grace]);
    clearTimeout(timer);
    this.kill();
    await this.death;
  }

  private wire(): void {
    const { stdout, stdin, stderr } = this.child;
    if (!stdout || !stdin || !stderr) throw new BroodError('INTERNAL', 'the agent process has no stdio pipes');
    // A failing kill or pipe must never become an unhandled 'error' in the host; the exit reports the death.
    this.child.on('error', () => undefined);
    stdout.on('error', () => undefined);
    stderr.on('error', () => undefined);
    stderr.setEncoding('utf8');
    let partial = '';
    stderr.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) this.remember(line);
    });
    stderr.on('end', () => partial !== '' && this.remember(partial));
    const framed = frameStdio(stdout, stdin, (reason) =>
      this.kill(
        `ACP agent '${this.options.name}' (pid ${this.pid}) broke the protocol: ${reason}; the process was stopped`,
      ),
    );
    this.connection = this.clientApp().connect(framed.stream as unknown as Acp.Stream);
    // stdout closed: the process is exiting, or is alive but useless; give it a moment, then stop it.
    void this.connection.closed.then(() => {
      const timer = setTimeout(
        () =>
          this.kill(`ACP agent '${this.options.name}' (pid ${this.pid}) closed its stdout; the process was stopped`),
        PIPE_DRAIN_MS,
      );
      timer.unref();
      void this.death.then(() => clearTimeout(timer));
    });
    this.child.once('exit', (code, signal) => {
      const finish = (): void => this.fail(this.exitMessage(code, signal));
      const timer = setTimeout(() => {
        // It exited, but what it started (behind a wrapper) still holds the pipes: that goes too.
        signalOwned(this.child, 'SIGKILL');
        finish();
      }, PIPE_DRAIN_MS);
      this.child.once('close', () => {
        this.released = true;
        this.markReleased();
        clearTimeout(timer);
        finish();
      });
    });
  }

  private clientApp(): Acp.ClientApp {
    const app = this.acp
      .client({ name: 'brood' })
      .onNotification('session/update', ({ params }) => this.sessions.get(params.sessionId)?.update(params.update))
      .onRequest('session/request_permission', async ({ params }) => {
        const handlers = this.sessions.get(params.sessionId);
        if (!handlers) throw this.acp.RequestError.resourceNotFound(params.sessionId);
        return handlers.permission(params);
      });
    if (this.options.fsRoot !== undefined) {
      const fs = fsHandlers(this.options.fsRoot, this.acp);
      app
        .onRequest('fs/read_text_file', ({ params }) =>
          fs.read(params, (event) => this.sessions.get(params.sessionId)?.fs(event)),
        )
        .onRequest('fs/write_text_file', ({ params }) =>
          fs.write(params, (event) => this.sessions.get(params.sessionId)?.fs(event)),
        );
    }
    return app;
  }

  private async initialize(version: string): Promise<void> {
    const fsCapability = this.options.fsRoot !== undefined;
    const response = await this.bounded(
      'initialize',
      this.connection.agent.request('initialize', {
        protocolVersion: this.acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: fsCapability, writeTextFile: fsCapability }, terminal: false },
        clientInfo: { name: 'brood', version },
      }),
    );
    if (response.protocolVersion !== this.acp.PROTOCOL_VERSION) {
      throw new BroodError(
        'PROVIDER_FAILED',
        `the ACP agent '${this.options.name}' speaks protocol version ${String(response.protocolVersion)}; brood speaks ${this.acp.PROTOCOL_VERSION}`,
        { details: { provider: this.options.name } },
      );
    }
    this.capabilities = response.agentCapabilities ?? {};
    if (response.agentInfo)
      this.agentInfo = {
        name: response.agentInfo.name,
        ...(response.agentInfo.version ? { version: response.agentInfo.version } : {}),
      };
  }

  /** A call bounded by `timeoutMs` and by the process's death. */
  private bounded<T>(what: string, call: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new BroodError(
              'PROVIDER_FAILED',
              `the ACP agent '${this.options.name}' did not answer ${what} within ${this.options.timeoutMs} ms`,
              { details: { provider: this.options.name } },
            ),
          ),
        this.options.timeoutMs,
      );
    });
    return Promise.race([this.untilDeath(call), timeout]).finally(() => clearTimeout(timer));
  }

  private untilDeath<T>(call: Promise<T>): Promise<T> {
    const died = this.death.then((message): never => {
      throw new BroodError('PROVIDER_FAILED', message, { details: { provider: this.options.name } });
    });
    // A request rejected because the stream closed is the process going away: report its death instead.
    return Promise.race([
      call.catch((error: unknown) =>
        this.dead || this.connection.signal.aborted ? died : Promise.reject(this.agentError(error)),
      ),
      died,
    ]);
  }

  /** A JSON-RPC error the agent answered with, as a readable message (not PROVIDER_FAILED: the process is fine). */
  private agentError(error: unknown): Error {
    if (error instanceof BroodError) return error;
    const rpc = error as { code?: unknown; message?: unknown; data?: unknown };
    const data = rpc.data === undefined ? '' : ` (${safeJson(rpc.data)})`;
    return new Error(`the ACP agent answered with error ${String(rpc.code ?? '?')}: ${errorMessage(error)}${data}`);
  }

  private protocolError(what: string): BroodError {
    const message = `ACP agent '${this.options.name}' (pid ${this.pid}) broke the protocol: ${what}; the process was stopped`;
    this.kill(message);
    return new BroodError('PROVIDER_FAILED', message, { details: { provider: this.options.name } });
  }

  private fail(message: string): void {
    if (this.failure !== undefined) return;
    this.failure = message;
    this.sessions.clear();
    this.connection?.close(new Error(message));
    this.markDead(message);
  }

  private exitMessage(code: number | null, signal: NodeJS.Signals | null): string {
    const how = signal !== null ? `was killed by signal ${signal}` : `exited with code ${String(code)}`;
    const tail =
      this.stderrTail.length === 0
        ? 'no stderr output'
        : `last stderr lines:\n${this.stderrTail.map((line) => `  ${line}`).join('\n')}`;
    return `ACP agent '${this.options.name}' (pid ${this.pid}) ${how}; ${tail}`;
  }

  private remember(line: string): void {
    const trimmed = line.trimEnd();
    if (trimmed === '') return;
    this.stderrTail.push(trimmed.length > STDERR_LINE_CHARS ? `${trimmed.slice(0, STDERR_LINE_CHARS)}…` : trimmed);
    if (this.stderrTail.length > STDERR_LINES) this.stderrTail.shift();
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
