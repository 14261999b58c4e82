/**
 * Rendering of a TreeState: the tree table (live demo, `inspect`), the summary table, and the live view
 * itself — redrawn in place with ANSI escapes on a TTY, plain one-line progress records otherwise (so
 * logs and CI output stay readable and diffable).
 */
import { formatCount, formatMs, formatTokens, table, truncate } from './format.js';
import { elapsedOf, stateOf, summarizeReasons, type AgentNode, type TreeState } from './tree-state.js';

const LABEL_WIDTH = 34;

export function treeLines(state: TreeState, options: { now: number; live: boolean }): string[] {
  const rows = state.ordered().map(({ node, prefix }) => [
    prefix + node.id,
    truncate(node.label, LABEL_WIDTH),
    String(node.depth),
    stateOf(node, options.live),
    String(node.turns),
    formatTokens(node.inputTokens, node.outputTokens),
    formatMs(elapsedOf(node, options.now, options.live)),
  ]);
  return table(['agent', 'label', 'depth', 'state', 'turns', 'tokens in/out', 'elapsed'], rows);
}

/** Final per-agent table plus a totals row; tokens are each agent's own requests (no double counting). */
export function summaryLines(state: TreeState, wallMs: number): string[] {
  const nodes = state.ordered().map(({ node }) => node);
  const rows = nodes.map((node) => [
    node.id,
    truncate(node.label, LABEL_WIDTH),
    String(node.depth),
    node.mode,
    summarizeReasons(node.stopReasons),
    String(node.turns),
    formatCount(node.inputTokens),
    formatCount(node.outputTokens),
    formatMs(node.lastEventAt - node.createdAt),
  ]);
  const sum = (pick: (n: AgentNode) => number): number => nodes.reduce((total, n) => total + pick(n), 0);
  rows.push([
    `total (${nodes.length} agents)`,
    '',
    String(Math.max(0, ...nodes.map((n) => n.depth))),
    '',
    '',
    String(sum((n) => n.turns)),
    formatCount(sum((n) => n.inputTokens)),
    formatCount(sum((n) => n.outputTokens)),
    formatMs(wallMs),
  ]);
  return table(['agent', 'label', 'depth', 'mode', 'stop', 'turns', 'in', 'out', 'duration'], rows);
}

export interface Output {
  write(text: string): unknown;
  readonly columns?: number;
}

/** Live view over a TreeState; `stop()` leaves the final frame (TTY) or nothing extra (plain). */
export class LiveTreeView {
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private drawnLines = 0;
  private stopped = false;
  // Ctrl-C would otherwise leave the user's terminal with a hidden cursor.
  private readonly onInterrupt = (): void => {
    this.out.write('\x1b[?25h\n');
    process.exit(130);
  };
  private readonly printed = new Map<string, string>();

  constructor(
    private readonly state: TreeState,
    private readonly out: Output,
    private readonly tty: boolean,
    private readonly startedAt: number,
  ) {}

  start(): void {
    if (this.tty) {
      this.out.write('\x1b[?25l'); // hide the cursor while redrawing, or it flickers over the table
      process.once('SIGINT', this.onInterrupt);
      this.timer = setInterval(() => this.redraw(), 100);
    } else {
      this.unsubscribe = this.state.onChange(() => this.printChanges());
    }
  }

  /** Idempotent: a second call must not redraw over whatever was printed after the first. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.unsubscribe?.();
    if (this.tty) {
      process.removeListener('SIGINT', this.onInterrupt);
      this.redraw();
      this.out.write('\x1b[?25h');
    }
  }

  /** Moves up over the previous frame, clears to the end of the screen, draws the new one. */
  private redraw(): void {
    // columns is 0/undefined when the size is unknown (e.g. under `script`): assume a wide terminal.
    const columns = this.out.columns;
    const width = columns !== undefined && columns > 20 ? columns - 1 : 160;
    // Lines wider than the terminal would wrap and break the line count used to move back up.
    const lines = treeLines(this.state, { now: Date.now(), live: true }).map((line) => line.slice(0, width));
    const up = this.drawnLines > 0 ? `\x1b[${this.drawnLines}F` : '';
    this.out.write(`${up}\x1b[0J${lines.join('\n')}\n`);
    this.drawnLines = lines.length;
  }

  /** Non-TTY: one line whenever an agent's state (or turn count) changes. */
  private printChanges(): void {
    const now = Date.now();
    for (const { node } of this.state.ordered()) {
      // The label arrives right after the header (descriptor or first message): wait for it.
      if (node.label === '') continue;
      const state = stateOf(node, true);
      const key = `${state}/${node.turns}`;
      if (this.printed.get(node.id) === key) continue;
      this.printed.set(node.id, key);
      const at = formatMs(now - this.startedAt).padStart(7);
      const label = node.label === '' ? '' : ` "${truncate(node.label, LABEL_WIDTH)}"`;
      const tokens = formatTokens(node.inputTokens, node.outputTokens);
      this.out.write(`[${at}] ${node.id}${label} depth ${node.depth} ${state} turns ${node.turns} tokens ${tokens}\n`);
    }
  }
}
