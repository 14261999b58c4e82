/**
 * The stdio transport brood uses for MCP servers it spawns. It speaks the SDK's framing (newline-
 * delimited JSON, the SDK's serializeMessage and message schema; lines read by stdio-lines.ts, which
 * fails a request at once on an unusable answer) but owns the child process, because brood needs what the SDK's
 * StdioClientTransport does not expose: the exit code or signal and the last stderr lines (for
 * MCP_UNAVAILABLE messages), and a close() that ends the server's whole process group (a server
 * behind `sh -c` or an npx-style launcher is a grandchild) and resolves only once it has really exited.
 */
import type { ChildProcess } from 'node:child_process';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { type Clock, systemClock } from '../clock.js';
import { LineSplitter } from '../util/json-lines.js';
import { signalOwned, spawnOwned } from '../util/owned-process.js';
import type { McpStdioServer } from './config.js';
import { MAX_MESSAGE_BYTES, messageOf } from './stdio-lines.js';

const STDERR_LINES_KEPT = 20;
const STDERR_LINES_SHOWN = 5;
/** Stdin closed, then SIGTERM, then SIGKILL: the shutdown sequence the MCP spec describes for stdio. */
const EXIT_GRACE_MS = 2_000;
/** After SIGKILL to the group, how long the pipes may stay open (held by a process that left the group). */
const PIPE_DRAIN_MS = 500;

export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #server: McpStdioServer;
  readonly #clock: Clock;
  readonly #lines = new LineSplitter(MAX_MESSAGE_BYTES);
  readonly #stderr: string[] = [];
  #partialLine = '';
  #child: ChildProcess | undefined;
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  #exited!: Promise<void>;
  #markExited!: () => void;

  constructor(server: McpStdioServer, clock: Clock = systemClock) {
    this.#server = server;
    this.#clock = clock;
    this.#exited = new Promise((resolve) => (this.#markExited = resolve));
  }

  get hasExited(): boolean {
    return this.#exit !== undefined;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  start(): Promise<void> {
    if (this.#child !== undefined) return Promise.reject(new Error('stdio transport already started'));
    const child = spawnOwned(this.#server.command, this.#server.args ?? [], {
      env: { ...getDefaultEnvironment(), ...this.#server.env },
      ...(this.#server.cwd === undefined ? {} : { cwd: this.#server.cwd }),
    });
    this.#child = child;
    child.stdout?.on('data', (chunk: Buffer) => this.#read(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.#keepStderr(chunk));
    // EPIPE when the process died under a write: the close event reports the death itself.
    child.stdin?.on('error', (error) => this.onerror?.(error));
    child.stdout?.on('error', (error) => this.onerror?.(error));
    child.once('close', (code, signal) => this.#closed(code, signal));
    return new Promise((resolve, reject) => {
      child.once('spawn', () => resolve());
      // `on`, not `once`: an 'error' event without a listener would take the host process down.
      child.on('error', (error) => {
        if (child.pid === undefined) {
          // Never started (ENOENT, EACCES): there is no process to wait for.
          this.#closed(null, null);
          reject(error);
        } else {
          this.onerror?.(error);
        }
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (this.#exit !== undefined || stdin === undefined || stdin === null || !stdin.writable) {
      return Promise.reject(new Error(`the server process ${this.describeExit()}`));
    }
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  /**
   * Ends the server (stdin closed, then SIGTERM, then SIGKILL, each signal to its whole process
   * group) and resolves once nothing of it holds the pipes any more.
   */
  async close(): Promise<void> {
    const child = this.#child;
    if (child === undefined || this.#exit !== undefined) return;
    child.stdin?.end();
    if (await this.#exitsWithin(EXIT_GRACE_MS)) return;
    signalOwned(child, 'SIGTERM');
    if (await this.#exitsWithin(EXIT_GRACE_MS)) return;
    signalOwned(child, 'SIGKILL');
    if (await this.#exitsWithin(PIPE_DRAIN_MS)) return;
    // A process that left the group (setsid) still holds the pipes: stop reading them instead.
    for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
    await this.#exited;
  }

  /** "exited with code 1; stderr: …" — what a failure message says about the process. */
  describeExit(): string {
    const exit = this.#exit;
    const how =
      exit === undefined
        ? 'is running'
        : exit.signal !== null
          ? `was killed by ${exit.signal}`
          : exit.code === null
            ? 'could not be started'
            : `exited with code ${exit.code}`;
    const lines = [...this.#stderr, this.#partialLine].filter((line) => line.trim() !== '').slice(-STDERR_LINES_SHOWN);
    return lines.length === 0 ? how : `${how}; last stderr: ${lines.join(' | ')}`;
  }

  #exitsWithin(ms: number): Promise<boolean> {
    let cancel: (() => void) | undefined;
    const timeout = new Promise<boolean>((resolve) => (cancel = this.#clock.setTimeout(() => resolve(false), ms)));
    return Promise.race([this.#exited.then(() => true), timeout]).finally(() => cancel?.());
  }

  #read(chunk: Buffer): void {
    for (const line of this.#lines.push(chunk)) {
      const message = messageOf(line);
      if (message instanceof Error) this.onerror?.(message);
      else if (message !== undefined) this.onmessage?.(message);
    }
  }

  #keepStderr(chunk: Buffer): void {
    const parts = (this.#partialLine + chunk.toString('utf8')).split(/\r?\n/);
    this.#partialLine = (parts.pop() ?? '').slice(-2_000);
    for (const line of parts) this.#stderr.push(line.slice(0, 500));
    if (this.#stderr.length > STDERR_LINES_KEPT) this.#stderr.splice(0, this.#stderr.length - STDERR_LINES_KEPT);
  }

  #closed(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#exit !== undefined) return;
    this.#exit = { code, signal };
    // Node closes the process and pipe handles in the event loop's close phase after this event;
    // two turns later they are gone, so "exited" really means nothing of the process is left.
    setImmediate(() => setImmediate(this.#markExited));
    this.onclose?.();
  }
}
