/**
 * run_code (SPEC §4 rule 8): model-written JavaScript in a fresh, disposable thread started by the
 * driver's own thread, so it never blocks the driver or the host. It is terminated when it runs
 * `codeBusyTimeoutMs` without a tool call in flight (a spin after an await included, which a
 * node:vm timeout cannot stop) or `codeWallTimeoutMs` in total; hitting a limit is an errored
 * result that keeps the logs, not a driver fault.
 */
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import type { ToolCallRecord } from '../models/types.js';
import type { ToolResult } from '../types.js';
import { SANDBOX_SOURCE } from './code-sandbox-source.js';
import type { DriverHost, DriverPlan } from './types.js';

const runCodeArgs = z.object({ description: z.string(), code: z.string() });

const sandboxMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('log'), line: z.string() }),
  z.object({ type: z.literal('call'), id: z.number(), name: z.string(), args: z.unknown() }),
  z.object({ type: z.literal('done'), text: z.string().optional() }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);

export type CodeRunner = (call: ToolCallRecord, signal: AbortSignal) => Promise<ToolResult>;

export function codeRunner(
  plan: Pick<DriverPlan, 'codeBusyTimeoutMs' | 'codeWallTimeoutMs'>,
  host: DriverHost,
): CodeRunner {
  return (call, signal) => {
    let args: z.infer<typeof runCodeArgs>;
    try {
      args = runCodeArgs.parse(JSON.parse(call.arguments));
    } catch {
      return Promise.resolve(
        failure('INVALID_ARGS', 'run_code needs { description: string, code: string } as JSON arguments', []),
      );
    }
    return new Sandbox(call.callId, args.code, plan, host, signal).result;
  };
}

class Sandbox {
  readonly result: Promise<ToolResult>;
  private readonly logs: string[] = [];
  private readonly worker: Worker;
  private inFlight = 0;
  private subCalls = 0;
  private busyTimer: NodeJS.Timeout | undefined;
  private wallTimer: NodeJS.Timeout | undefined;
  private settle!: (result: ToolResult) => void;
  private settled = false;

  constructor(
    private readonly callId: string,
    code: string,
    private readonly limits: Pick<DriverPlan, 'codeBusyTimeoutMs' | 'codeWallTimeoutMs'>,
    private readonly host: DriverHost,
    private readonly signal: AbortSignal,
  ) {
    this.result = new Promise((resolve) => (this.settle = resolve));
    this.worker = new Worker(SANDBOX_SOURCE, { eval: true, workerData: { code }, stdout: true, stderr: true });
    this.worker.on('message', (raw: unknown) => this.onMessage(raw));
    this.worker.on('error', (error) =>
      this.finish(failure(undefined, `run_code crashed: ${error.message}`, this.logs)),
    );
    this.worker.on('exit', (code) =>
      this.finish(failure(undefined, `run_code exited unexpectedly (code ${code})`, this.logs)),
    );
    this.wallTimer = setTimeout(
      () => this.limitHit(`run_code exceeded its wall-clock limit of ${limits.codeWallTimeoutMs} ms`),
      limits.codeWallTimeoutMs,
    );
    // The busy limit measures the program running, not thread start-up: on a loaded host starting the
    // thread can take longer than a small codeBusyTimeoutMs, and the program was then killed before
    // its first line ran (found by test/reliability/faults.test.ts). The wall limit still counts it.
    this.worker.once('online', () => {
      if (!this.settled && this.inFlight === 0) this.armBusyTimer();
    });
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  private readonly onAbort = (): void => this.finish(failure('ABORTED', 'run_code was cancelled', this.logs));

  private onMessage(raw: unknown): void {
    const parsed = sandboxMessage.safeParse(raw);
    if (!parsed.success || this.settled) return;
    const message = parsed.data;
    if (message.type === 'log') this.logs.push(message.line);
    else if (message.type === 'call') void this.forward(message.id, message.name, message.args);
    else if (message.type === 'done') this.finish(success(this.logs, message.text));
    else this.finish(failure(undefined, message.message, this.logs));
  }

  /** A sub-call goes to the parent resolver as the same agent, host-style (not collapsed by Code Mode). */
  private async forward(id: number, name: string, args: unknown): Promise<void> {
    this.inFlight += 1;
    this.disarmBusyTimer();
    const callId = `${this.callId}:code:${++this.subCalls}`;
    let reply: { id: number; ok: boolean; value?: unknown; message?: string };
    try {
      const result = await this.host.executeTool({
        callId,
        name,
        arguments: JSON.stringify(args ?? {}),
        origin: 'code',
      });
      reply = result.isError
        ? { id, ok: false, message: result.error?.message ?? result.content }
        : { id, ok: true, value: result.value !== undefined ? result.value : result.content };
    } catch (error) {
      reply = { id, ok: false, message: error instanceof Error ? error.message : String(error) };
    }
    this.inFlight -= 1;
    if (this.settled) return;
    this.worker.postMessage(reply);
    if (this.inFlight === 0) this.armBusyTimer();
  }

  private armBusyTimer(): void {
    this.disarmBusyTimer();
    const limit = this.limits.codeBusyTimeoutMs;
    this.busyTimer = setTimeout(
      () => this.limitHit(`run_code ran ${limit} ms without awaiting a tool call (codeBusyTimeoutMs)`),
      limit,
    );
  }

  private disarmBusyTimer(): void {
    if (this.busyTimer) clearTimeout(this.busyTimer);
    this.busyTimer = undefined;
  }

  private limitHit(message: string): void {
    this.finish(failure(undefined, message, this.logs));
  }

  private finish(result: ToolResult): void {
    if (this.settled) return;
    this.settled = true;
    this.disarmBusyTimer();
    if (this.wallTimer) clearTimeout(this.wallTimer);
    this.signal.removeEventListener('abort', this.onAbort);
    void this.worker.terminate();
    this.settle(result);
  }
}

function success(logs: string[], text: string | undefined): ToolResult {
  const parts = text === undefined ? logs : [...logs, text];
  return { isError: false, content: parts.join('\n') };
}

function failure(code: string | undefined, message: string, logs: string[]): ToolResult {
  const content = [`Error: ${message}`, ...logs].join('\n');
  return { isError: true, content, error: code === undefined ? { message } : { code, message } };
}
