/**
 * docs/errors.md documents every error code, and only codes that exist: the code list is parsed from
 * src/errors.ts's ERROR_CODES (the code map every BroodError is typed by), the page's list from the
 * first column of its table.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../support/run-cli.js';

function codesInSource(source: string): string[] {
  const list = /export const ERROR_CODES = \[([\s\S]*?)\] as const/.exec(source);
  if (list === null) throw new Error('src/errors.ts: no `export const ERROR_CODES = [...] as const`');
  return [...list[1]!.matchAll(/'([A-Z_]+)'/g)].map((m) => m[1]!);
}

function codesOnPage(markdown: string): string[] {
  return [...markdown.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]!);
}

describe('docs/errors.md', () => {
  const source = codesInSource(readFileSync(join(ROOT, 'src/errors.ts'), 'utf8'));
  const page = codesOnPage(readFileSync(join(ROOT, 'docs/errors.md'), 'utf8'));

  it('reads the code map of src/errors.ts', () => {
    expect(source).toContain('INVALID_CONFIG');
    expect(source.length).toBeGreaterThanOrEqual(30);
  });

  it('documents every code in src/errors.ts', () => {
    expect(source.filter((code) => !page.includes(code))).toEqual([]);
  });

  it('documents no code that src/errors.ts does not have, and each once', () => {
    expect(page.filter((code) => !source.includes(code))).toEqual([]);
    expect(page.filter((code, i) => page.indexOf(code) !== i)).toEqual([]);
  });
});
