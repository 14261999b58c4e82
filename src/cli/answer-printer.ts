/**
 * `brood run`'s stdout: the lead's text as it streams (text-delta events), one line per assistant
 * message. An adapter that does not stream still gets its final answer printed once, at the end.
 */
import type { BroodEvent } from '../index.js';

export class AnswerPrinter {
  private streamed = '';
  private lineOpen = false;
  private readonly shown = new Set<string>();
  private turnEnded: (() => void) | undefined;
  /** Resolves once the stream delivered the lead's turn-end: every delta before it has been printed. */
  readonly caughtUp: Promise<void>;

  constructor(
    private readonly agentId: string,
    private readonly out: { write(text: string): unknown },
  ) {
    this.caughtUp = new Promise((resolve) => {
      this.turnEnded = resolve;
    });
  }

  onEvent(event: BroodEvent): void {
    if (event.agentId !== this.agentId) return;
    if (event.type === 'text-delta') {
      this.out.write(event.delta);
      this.streamed += event.delta;
      this.lineOpen = true;
    } else if (event.type === 'assistant-message') {
      if (this.streamed !== '') this.shown.add(this.streamed);
      this.endLine();
      this.streamed = '';
    } else if (event.type === 'turn-end') {
      this.turnEnded?.();
    }
  }

  /** Prints the answer if streaming did not already show it; always ends with a newline. */
  finish(output: string): void {
    this.endLine();
    if (output !== '' && !this.shown.has(output)) this.out.write(`${output}\n`);
  }

  private endLine(): void {
    if (this.lineOpen) this.out.write('\n');
    this.lineOpen = false;
  }
}
