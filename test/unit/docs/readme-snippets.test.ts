/**
 * Every TypeScript snippet in README.md compiles against the public API: `brood` resolves to the built
 * declarations (dist/index.d.ts), exactly what a host gets. A snippet may use `brood`, `agent`, `text`,
 * `signal` and `lookup` without declaring them (the prose around it introduces them); anything it
 * declares itself shadows that context.
 */
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT, assertBuilt } from '../../support/run-cli.js';

const CONTEXT: Record<string, string> = {
  brood: "declare const brood: import('brood').Brood;",
  agent: "declare const agent: import('brood').Agent;",
  text: 'declare const text: string;',
  signal: 'declare const signal: AbortSignal;',
  lookup: 'declare function lookup(query: string, signal: AbortSignal): Promise<string>;',
};

function snippets(markdown: string): { line: number; code: string }[] {
  const out: { line: number; code: string }[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    if (lines[i]!.trim() !== '```ts') continue;
    const start = i + 1;
    while (i + 1 < lines.length && lines[i + 1]!.trim() !== '```') i += 1;
    out.push({ line: start + 1, code: lines.slice(start, i + 1).join('\n') });
    i += 1;
  }
  return out;
}

function withContext(code: string): string {
  const declared = (name: string): boolean =>
    new RegExp(`\\b(const|let|var|function)\\s+${name}\\b`).test(code) ||
    new RegExp(`\\bimport\\b[^;]*?\\b${name}\\b[^;]*?\\bfrom\\b`).test(code);
  const preamble = Object.entries(CONTEXT)
    .filter(([name]) => new RegExp(`\\b${name}\\b`).test(code) && !declared(name))
    .map(([, declaration]) => declaration);
  return `${preamble.join('\n')}\n${code}\nexport {};\n`;
}

describe('README.md', () => {
  it('every TypeScript snippet type-checks against the built public API', () => {
    assertBuilt();
    const found = snippets(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(found.length).toBeGreaterThanOrEqual(5);
    const dir = mkdtempSync(join(tmpdir(), 'brood-readme-'));
    try {
      const files = found.map((snippet, index) => {
        const file = join(dir, `snippet-${index}-line-${snippet.line}.ts`);
        writeFileSync(file, withContext(snippet.code));
        return file;
      });
      const program = ts.createProgram(files, {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        lib: ['lib.es2022.d.ts'], // no DOM: snippets are Node code, and the DOM declarations dominate check time
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules/@types')],
        baseUrl: ROOT,
        paths: { brood: [join(ROOT, 'dist/index.d.ts')], zod: [join(ROOT, 'node_modules/zod')] },
      });
      const problems = ts.getPreEmitDiagnostics(program).map((d) => {
        const where = d.file
          ? `${d.file.fileName.split('/').at(-1)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line}`
          : '';
        return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      });
      expect(problems).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // Type-checking is CPU work that scales with the machine (like conformance.test.ts): the bound is for a hang.
  }, 120_000);
});
