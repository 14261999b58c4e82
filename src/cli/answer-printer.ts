/**
 * `brood run`'s stdout: the lead's text as it streams (text-delta events), one line per assistant
 * message. An adapter that does not stream still gets its final answer printed once, at the end.
 */
import type { BroodEvent } from '../index.js';
import { type Measure, wrapRows } from './text-width.js';
import type { LiveTreeView } from './tree-view.js';

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

/**
 * The answer's stdout when it shares a terminal with the live tree: whole lines are printed above the
 * tree's region (so they scroll up into scrollback exactly as written), the line still being streamed
 * is shown at the top of the region until its newline arrives.
 */
export class SharedAnswer {
  private tail = '';
  private view: LiveTreeView | undefined;

  constructor(
    private readonly stdout: { write(text: string): unknown },
    private readonly measure: Measure,
  ) {}

  /** The view that draws the region; until it is attached, text goes straight to stdout. */
  attach(view: LiveTreeView): void {
    this.view = view;
  }

  write(text: string): void {
    if (this.view === undefined) {
      this.stdout.write(text);
      return;
    }
    const all = this.tail + text;
    const cut = all.lastIndexOf('\n');
    this.tail = all.slice(cut + 1);
    if (cut >= 0) this.view.printAbove(this.stdout, all.slice(0, cut + 1));
  }

  /** Prints a line still open (a run that ended early), so the view can be stopped below it. */
  flush(): void {
    if (this.tail !== '') this.write('\n');
  }

  /** For LiveTreeView: the last `maxRows` rows of the line being streamed, wrapped to `width`. */
  readonly preview = (width: number, maxRows: number): string[] =>
    wrapRows(this.tail, width, this.measure).slice(-maxRows);
}
