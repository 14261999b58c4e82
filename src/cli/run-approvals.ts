/**
 * `brood run`'s answers to approval requests (docs/approvals.md): tools named by `--approve` are
 * allowed; any other request gets a y/N prompt when stdin is a terminal, one at a time, and is
 * refused without one (nobody could answer it, and a run must not hang on a question).
 */
import { createInterface } from 'node:readline';
import type { ApprovalRequestEvent, Brood } from '../index.js';
import { oneLine } from './cli-errors.js';

export interface ApproverIo {
  /** Whether a person can answer (stdin is a terminal). */
  interactive: boolean;
  /** Asks one question; resolves with the line typed. */
  ask(question: string): Promise<string>;
}

export function terminalIo(print: (line: string) => void): ApproverIo {
  return {
    interactive: process.stdin.isTTY === true,
    ask: (question) =>
      new Promise((resolve) => {
        print(question);
        const lines = createInterface({ input: process.stdin });
        lines.once('line', (line) => {
          lines.close();
          resolve(line);
        });
        lines.once('close', () => resolve(''));
      }),
  };
}

/** `--approve read_file,http_get` as a set of tool names. */
export function parseApproveFlag(value: string | undefined): Set<string> {
  return new Set(
    (value ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== ''),
  );
}

export class CliApprover {
  /** Questions wait for the one before them: a terminal answers one at a time. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly brood: Brood,
    private readonly allowed: ReadonlySet<string>,
    private readonly io: ApproverIo,
  ) {}

  onEvent(event: { type: string }): void {
    if (event.type !== 'approval-request') return;
    const request = event as ApprovalRequestEvent;
    this.queue = this.queue.then(() => this.answer(request)).catch(() => undefined);
  }

  private async answer(request: ApprovalRequestEvent): Promise<void> {
    const { approvalId, tool } = request;
    if (this.allowed.has(tool)) return this.brood.approvals.respond(approvalId, { approve: true });
    if (!this.io.interactive)
      return this.brood.approvals.respond(approvalId, {
        approve: false,
        message: `no terminal to ask for approval of "${tool}" (brood run --approve ${tool} allows it)`,
      });
    const args = oneLine(JSON.stringify(request.args) ?? '');
    const line = await this.io.ask(`brood run: allow ${tool} ${args} (agent ${request.agentId})? [y/N] `);
    const approve = /^\s*y(es)?\s*$/i.test(line);
    await this.brood.approvals.respond(
      approvalId,
      approve ? { approve: true } : { approve: false, message: 'the user said no' },
    );
  }
}
