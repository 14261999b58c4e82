/**
 * The bottom region of a terminal that a live view redraws in place while other text is printed
 * above it. The cursor always rests at the start of the line just below the region, so text written
 * after `clear()` lands where the region was and the next `draw()` puts the region under it.
 *
 * Lines must be narrower than the terminal (they never wrap), so the region's height is its line
 * count, and at most `rows - 1` tall, so the whole region stays on screen and moving up over it always
 * works. Erasing is line by line: never "clear to end of screen" from the top-left corner, which
 * terminals such as tmux (`scroll-on-clear`) treat as a whole-screen clear and copy into scrollback —
 * that is how stale frames ended up there.
 */
import { fstatSync } from 'node:fs';

const ERASE_LINE = '\x1b[2K';
const up = (lines: number): string => (lines > 0 ? `\r\x1b[${lines}A` : '\r');

export interface RegionOutput {
  write(text: string): unknown;
}

export class TerminalRegion {
  private height = 0;

  constructor(private readonly out: RegionOutput) {}

  /** Replaces the region with `lines` (each narrower than the terminal). */
  draw(lines: readonly string[]): void {
    let text = up(this.height);
    for (const line of lines) text += `${ERASE_LINE}${line}\n`;
    // A shorter frame: blank the old frame's remaining lines, then come back up below the new one.
    const leftover = this.height - lines.length;
    if (leftover > 0) text += `${ERASE_LINE}\n`.repeat(leftover) + up(leftover);
    this.height = lines.length;
    this.out.write(text);
  }

  /** Blanks the region and leaves the cursor on its first line: what is written next replaces it. */
  clear(): void {
    if (this.height === 0) return;
    this.out.write(`${up(this.height)}${`${ERASE_LINE}\n`.repeat(this.height)}${up(this.height)}`);
    this.height = 0;
  }

  /** Leaves what is drawn on screen for good (a final frame): the next draw starts below it. */
  release(): void {
    this.height = 0;
  }
}

/** Whether two file descriptors are the same terminal device (stdout and stderr of one tty). */
export function sameTerminal(a: number, b: number): boolean {
  try {
    const [first, second] = [fstatSync(a), fstatSync(b)];
    return first.isCharacterDevice() && first.rdev === second.rdev;
  } catch {
    return false;
  }
}
