/**
 * Display-width text helpers for terminal output: CJK and emoji take two columns, combining marks none.
 * `string-width` is loaded lazily (only the CLI needs it), once, by `loadDisplayWidth()`.
 */
export type Measure = (text: string) => number;

let loaded: Measure | undefined;

export async function loadDisplayWidth(): Promise<Measure> {
  if (loaded === undefined) {
    const { default: stringWidth } = await import('string-width');
    loaded = (text) => stringWidth(text);
  }
  return loaded;
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Whitespace runs flattened to one space, then cut to `width` columns with an ellipsis. */
export function fitWidth(text: string, width: number, measure: Measure): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (measure(flat) <= width) return flat;
  if (width <= 0) return '';
  let out = '';
  let used = 0;
  for (const { segment } of segmenter.segment(flat)) {
    const w = measure(segment);
    if (used + w > width - 1) break;
    out += segment;
    used += w;
  }
  return `${out}…`;
}

/** Cuts without an ellipsis (whole lines that must not wrap). */
export function clip(text: string, width: number, measure: Measure): string {
  if (measure(text) <= width) return text;
  let out = '';
  let used = 0;
  for (const { segment } of segmenter.segment(text)) {
    const w = measure(segment);
    if (used + w > width) break;
    out += segment;
    used += w;
  }
  return out;
}

export function pad(text: string, width: number, measure: Measure): string {
  return text + ' '.repeat(Math.max(0, width - measure(text)));
}

/** Left-aligned columns by display width; the last column is not padded (no trailing spaces). */
export function alignedTable(rows: string[][], measure: Measure): string[] {
  const columns = Math.max(0, ...rows.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, col) =>
    Math.max(0, ...rows.map((row) => measure(row[col] ?? ''))),
  );
  return rows.map((row) =>
    row
      .map((cell, col) => (col === row.length - 1 ? cell : pad(cell, widths[col] ?? 0, measure)))
      .join('  ')
      .trimEnd(),
  );
}

/**
 * `text` (one line, no newline) cut into rows of at most `width` columns, as a terminal would wrap
 * it; tabs become spaces and other control characters are dropped, so each row's width is exact.
 */
export function wrapRows(text: string, width: number, measure: Measure): string[] {
  const rows: string[] = [];
  let row = '';
  let used = 0;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
  const printable = text.replace(/\t/g, '  ').replace(/[\x00-\x1f\x7f]/g, '');
  for (const { segment } of segmenter.segment(printable)) {
    const w = measure(segment);
    if (used + w > width && row !== '') {
      rows.push(row);
      row = '';
      used = 0;
    }
    row += segment;
    used += w;
  }
  if (row !== '') rows.push(row);
  return rows;
}
