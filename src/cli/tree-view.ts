/**
 * Rendering of a TreeState: the live tree (never taller or wider than the terminal), the summary
 * table, and the live view itself — a region redrawn in place at the bottom of a TTY, with text
 * printed above it (`printAbove`), or plain one-line progress records otherwise (so logs and CI output
 * stay readable and diffable).
 */
import { formatCount, formatMs, formatTokens } from './format.js';
import { TerminalRegion } from './terminal-region.js';
import { alignedTable, clip, fitWidth, type Measure } from './text-width.js';
import { type AgentNode, elapsedOf, stateOf, summarizeReasons, type TreeState } from './tree-state.js';

const MIN_LABEL = 8;
const MAX_LABEL = 60;
const TREE_HEADER = ['agent', 'label', 'depth', 'state', 'turns', 'tokens in/out', 'elapsed'];

export interface FrameOptions {
  now: number;
  live: boolean;
  /** Terminal columns; lines are kept one column short so the cursor never wraps. */
  columns: number;
  /** Terminal rows; the frame keeps one row free for the cursor. Infinity: no height limit. */
  rows: number;
  measure: Measure;
}

/** One frame of the tree: at most `rows - 1` lines, none wider than `columns - 1`. */
export function renderTree(state: TreeState, options: FrameOptions): string[] {
  const maxWidth = Math.max(1, options.columns - 1);
  const maxLines = Number.isFinite(options.rows) ? Math.max(1, options.rows - 1) : Number.POSITIVE_INFINITY;
  if (maxLines < 3) return [clip(countsLine(state, options.live), maxWidth, options.measure)];
  const ordered = state.ordered();
  const { shown, hidden, hiddenRunning } = pickRows(ordered, maxLines - 1, options.live);
  const cells = shown.map(({ node, prefix }) => [
    prefix + node.id,
    node.label,
    String(node.depth),
    stateOf(node, options.live),
    String(node.turns),
    formatTokens(node.inputTokens, node.outputTokens),
    formatMs(elapsedOf(node, options.now, options.live)),
  ]);
  const table = fitLabels([TREE_HEADER, ...cells], maxWidth, options.measure);
  const lines = alignedTable(table, options.measure);
  if (hidden > 0) lines.push(`… ${hidden} more (${hiddenRunning} running)`);
  return lines.slice(0, maxLines).map((line) => clip(line, maxWidth, options.measure));
}

/** Too low for a table (a header, an agent and "… N more"): one line counting the agents by state. */
function countsLine(state: TreeState, live: boolean): string {
  const counts = new Map<string, number>();
  for (const { node } of state.ordered()) {
    const key = stateOf(node, live);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const byState = [...counts].map(([key, count]) => `${count} ${key}`).join(', ');
  return `${state.nodes.size} agent${state.nodes.size === 1 ? '' : 's'}: ${byState}`;
}

function isRunning(node: AgentNode): boolean {
  return node.openTurn || node.activeRuns > 0;
}

/**
 * When the tree does not fit: the top-level agents first, then the running agents, then the rest in
 * tree order; shown rows keep tree order and one line says what was left out.
 */
function pickRows<T extends { node: AgentNode }>(
  ordered: T[],
  budget: number,
  live: boolean,
): { shown: T[]; hidden: number; hiddenRunning: number } {
  if (ordered.length <= budget) return { shown: ordered, hidden: 0, hiddenRunning: 0 };
  const keep = Math.max(0, budget - 1); // one line for "… N more"
  const chosen = new Set<T>();
  const take = (accept: (row: T) => boolean): void => {
    for (const row of ordered) if (chosen.size < keep && accept(row)) chosen.add(row);
  };
  take((row) => row.node.parentId === undefined || row.node.depth === 0);
  if (live) take((row) => isRunning(row.node));
  take(() => true);
  const shown = ordered.filter((row) => chosen.has(row));
  const left = ordered.filter((row) => !chosen.has(row));
  return { shown, hidden: left.length, hiddenRunning: left.filter((row) => isRunning(row.node)).length };
}

/** Labels take the width the other columns leave (dropped when that is too narrow to say anything). */
function fitLabels(rows: string[][], maxWidth: number, measure: Measure, labelColumn = 1): string[][] {
  const widthOf = (col: number): number => Math.max(0, ...rows.map((row) => measure(row[col] ?? '')));
  const columns = rows[0]?.length ?? 0;
  let others = 0;
  for (let col = 0; col < columns; col += 1) if (col !== labelColumn) others += widthOf(col);
  const gaps = 2 * (columns - 1);
  const room = Math.min(MAX_LABEL, maxWidth - others - gaps);
  if (room < MIN_LABEL) return rows.map((row) => row.filter((_, col) => col !== labelColumn));
  return rows.map((row, index) =>
    row.map((cell, col) => (col === labelColumn && index > 0 ? fitWidth(cell, room, measure) : cell)),
  );
}

/** Final per-agent table plus a totals row; tokens are each agent's own requests (no double counting). */
export function summaryLines(
  state: TreeState,
  wallMs: number,
  measure: Measure,
  columns = Number.POSITIVE_INFINITY,
): string[] {
  const nodes = state.ordered().map(({ node }) => node);
  const rows = nodes.map((node) => [
    node.id,
    node.label,
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
  const header = ['agent', 'label', 'depth', 'mode', 'stop', 'turns', 'in', 'out', 'duration'];
  const width = Number.isFinite(columns) ? Math.max(1, columns - 1) : 200;
  return alignedTable(fitLabels([header, ...rows], width, measure), measure);
}

export interface Output {
  write(text: string): unknown;
  readonly columns?: number;
  readonly rows?: number;
}

/** Lines shown above the tree in the live region (the answer being streamed), at most `maxRows`. */
export type Preview = (width: number, maxRows: number) => string[];

/** Live view over a TreeState; `stop()` leaves the final frame (TTY) or nothing extra (plain). */
export class LiveTreeView {
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly region: TerminalRegion;
  private live = false;
  private stopped = false;
  /** Text printed above the region while it is held (a question waits for its answer), printed on release. */
  private held: { stream: { write(text: string): unknown }; text: string }[] | undefined;
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
    private readonly measure: Measure,
    /** false when the command handles Ctrl-C itself (brood run cancels the turn first). */
    private readonly exitOnInterrupt = true,
    private readonly preview?: Preview,
  ) {
    this.region = new TerminalRegion(out);
  }

  start(): void {
    if (this.tty) {
      this.live = true;
      this.out.write('\x1b[?25l'); // hide the cursor while redrawing, or it flickers over the table
      if (this.exitOnInterrupt) process.once('SIGINT', this.onInterrupt);
      this.timer = setInterval(() => this.redraw(), 100);
    } else {
      this.unsubscribe = this.state.onChange(() => this.printChanges());
    }
  }

  /**
   * Writes `text` to `stream` (stdout or stderr of the same terminal) above the live region, which is
   * redrawn below it; nothing of the region is left behind. `text` should end with a newline.
   */
  printAbove(stream: { write(text: string): unknown }, text: string): void {
    if (this.held !== undefined) {
      this.held.push({ stream, text });
      return;
    }
    if (!this.live) {
      stream.write(text);
      return;
    }
    this.region.clear();
    stream.write(text);
    this.redraw();
  }

  /**
   * Blanks the region and stops redrawing it until `release()`, leaving the cursor at the start of a free
   * line: a question written there is not erased or cut by the next frame while its answer is typed.
   * What `printAbove` gets meanwhile waits, so it cannot land in the middle of the question.
   */
  hold(): void {
    if (this.held !== undefined) return;
    this.held = [];
    if (!this.live) return;
    this.region.clear();
    this.out.write('\x1b[?25h'); // the cursor the redraws hide: the answer is typed at it
  }

  /** Prints what waited while the region was held, then draws the region below the typed answer. */
  release(): void {
    const held = this.held;
    if (held === undefined) return;
    this.held = undefined;
    for (const { stream, text } of held) this.printAbove(stream, text);
    if (!this.live) return;
    this.out.write('\x1b[?25l');
    this.redraw();
  }

  /**
   * Idempotent. On a TTY the last frame is the whole tree with final states (the same rows as the
   * summary), left on screen: it is never redrawn, so it need not fit the terminal.
   */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.release();
    if (this.timer !== undefined) clearInterval(this.timer);
    this.unsubscribe?.();
    if (this.tty) {
      this.live = false;
      process.removeListener('SIGINT', this.onInterrupt);
      const { columns } = terminalSize(this.out);
      const frame = { now: Date.now(), live: false, columns, rows: Number.POSITIVE_INFINITY, measure: this.measure };
      this.region.draw(renderTree(this.state, frame));
      this.region.release();
      this.out.write('\x1b[?25h');
    }
  }

  /** The preview (at most half the region) above the tree, together at most `rows - 1` lines. */
  private redraw(): void {
    if (this.held !== undefined) return;
    const { columns, rows } = terminalSize(this.out);
    const budget = Number.isFinite(rows) ? rows - 1 : Number.POSITIVE_INFINITY;
    const previewRows = Number.isFinite(budget) ? Math.max(1, Math.floor(budget / 2)) : 20;
    const preview = this.preview?.(Math.max(1, columns - 1), previewRows) ?? [];
    const tree = renderTree(this.state, {
      now: Date.now(),
      live: true,
      columns,
      rows: budget - preview.length + 1,
      measure: this.measure,
    });
    this.region.draw([...preview, ...tree]);
  }

  /** Non-TTY: one line whenever an agent's state (or turn count) changes. */
  private printChanges(): void {
    const now = Date.now();
    for (const { node } of this.state.ordered()) {
      // The label arrives right after the agent appears (descriptor or prompt): wait for it.
      if (node.label === '') continue;
      const state = stateOf(node, true);
      const key = `${state}/${node.turns}`;
      if (this.printed.get(node.id) === key) continue;
      this.printed.set(node.id, key);
      const at = formatMs(now - this.startedAt).padStart(7);
      const tokens = formatTokens(node.inputTokens, node.outputTokens);
      this.out.write(
        `[${at}] ${node.id} "${fitWidth(node.label, 34, this.measure)}" depth ${node.depth} ${state} turns ${node.turns} tokens ${tokens}\n`,
      );
    }
  }
}

/**
 * columns/rows are 0 or undefined when the size is unknown (e.g. under `script`): assume 160×∞. A
 * terminal of fewer than 3 rows has no room for a region above the cursor line: treated as unknown.
 */
export function terminalSize(out: Output): { columns: number; rows: number } {
  const columns = out.columns !== undefined && out.columns > 20 ? out.columns : 160;
  const rows = out.rows !== undefined && out.rows > 2 ? out.rows : Number.POSITIVE_INFINITY;
  return { columns, rows };
}
