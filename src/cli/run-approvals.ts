/**
 * `brood run`'s answers to approval requests (docs/approvals.md): tools named by `--approve` are
 * allowed; any other request gets a y/N prompt when stdin is a terminal, one at a time, and is
 * refused without one (nobody could answer it, and a run must not hang on a question).
 */
import { createInterface, type Interface } from 'node:readline';
import type { ApprovalRequestEvent, Brood } from '../index.js';
import { oneLine } from './cli-errors.js';
import { type Measure, wrapRows } from './text-width.js';

export interface ApproverIo {
  /** Whether a person can answer (stdin is a terminal). */
  interactive: boolean;
  /** Asks one question; resolves with the line typed. */
  ask(question: string): Promise<string>;
}

/** A terminal's questions can be closed: a run that ends (Ctrl-C) must not wait on stdin for an answer. */
export interface TerminalIo extends ApproverIo {
  /** Ends the open question, if any, on a line of its own (it answers ''); later questions answer '' at once. */
  close(): void;
}

/** Where the question is written: the terminal of the live tree, which must not redraw over it. */
export interface PromptSurface {
  write(text: string): void;
  /** Terminal columns. */
  columns(): number;
  measure: Measure;
  /** Stops the live region's redraws (leaving the cursor on a free line) while a question is open. */
  hold(): void;
  /** Redraws it below the typed answer. */
  release(): void;
}

export function terminalIo(surface: PromptSurface, input: NodeJS.ReadableStream = process.stdin): TerminalIo {
  let open: Interface | undefined;
  let closed = false;
  return {
    interactive: process.stdin.isTTY === true,
    ask: async (question) => {
      if (closed) return '';
      surface.hold();
      try {
        surface.write(wrappedPrompt(question, surface.columns(), surface.measure));
        open = createInterface({ input });
        return await nextLine(open);
      } finally {
        open = undefined;
        surface.release();
      }
    },
    close: () => {
      closed = true;
      if (open === undefined) return;
      surface.write('\n');
      open.close();
    },
  };
}

/**
 * The question cut into rows one column narrower than the terminal, as a terminal would wrap it but
 * with the cursor never in the last column; the answer is typed after its last row.
 */
export function wrappedPrompt(question: string, columns: number, measure: Measure): string {
  const width = Math.max(1, columns - 1);
  return question
    .split('\n')
    .flatMap((line) => (line === '' ? [''] : wrapRows(line, width, measure)))
    .join('\n');
}

/** The next line read by `lines`, which it then closes; '' when it is closed first (input ended, or close()). */
function nextLine(lines: Interface): Promise<string> {
  return new Promise((resolve) => {
    lines.once('line', (line) => {
      // Settle before closing: close() emits 'close' at once, and its '' would be the answer.
      resolve(line);
      lines.close();
    });
    lines.once('close', () => resolve(''));
  });
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
