/**
 * Relative links in README.md and docs/*.md point at files that exist and, with a `#fragment`, at a
 * heading of that file (GitHub's slug rules: lower case, punctuation dropped, spaces to hyphens).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../support/run-cli.js';

const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((n) => n.endsWith('.md'))
    .map((n) => `docs/${n}`),
];

function withoutCode(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(file: string): Set<string> {
  const text = withoutCode(readFileSync(file, 'utf8'));
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

function brokenLinks(file: string): string[] {
  const text = withoutCode(readFileSync(join(ROOT, file), 'utf8'));
  const broken: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target!)) continue; // https:, mailto:
    const [path = '', fragment] = target!.split('#');
    const resolved = path === '' ? join(ROOT, file) : join(ROOT, dirname(file), path);
    if (!existsSync(resolved)) broken.push(`${file}: ${target} (no ${relative(ROOT, resolved)})`);
    else if (fragment !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(fragment))
      broken.push(`${file}: ${target} (no heading #${fragment})`);
  }
  return broken;
}

describe('links in README.md and docs/', () => {
  it('every relative link resolves to a file and heading', () => {
    expect(FILES.length).toBeGreaterThan(10);
    expect(FILES.flatMap(brokenLinks)).toEqual([]);
  });
});
