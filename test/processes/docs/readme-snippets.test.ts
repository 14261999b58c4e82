/**
 * The code in README.md and docs/*.md works against the built package, exactly what a host gets.
 *
 * - Every TypeScript block (```ts, with or without `runnable`) type-checks against the built
 *   declarations (dist/index.d.ts). A block may use `brood`, `agent`, `text`, `signal` and `lookup`
 *   without declaring them (the prose around it introduces them); anything it declares itself shadows
 *   that context.
 * - A block marked ```ts runnable (or ```js runnable) is run as written with Node, importing `brood` by
 *   name (the package resolves itself), and must exit 0. If the next fenced block before any heading is
 *   a ```text block, it is the block's expected stdout. Runnable blocks must need no network
 *   (scriptedModels, loopback servers).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { assertBuilt, declarationsBuilt, ROOT, runNode } from '../../support/run-cli.js';

interface Block {
  file: string;
  line: number;
  lang: string;
  runnable: boolean;
  code: string;
  expectedOutput?: string;
}

const CONTEXT: Record<string, string> = {
  brood: "declare const brood: import('brood').Brood;",
  agent: "declare const agent: import('brood').Agent;",
  text: 'declare const text: string;',
  signal: 'declare const signal: AbortSignal;',
  lookup: 'declare function lookup(query: string, signal: AbortSignal): Promise<string>;',
};

const DOC_FILES = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`)].filter((f) =>
  f.endsWith('.md'),
);

/** Every fenced block of a markdown file, with its info string split into language and marker. */
function blocks(file: string): Block[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const out: Block[] = [];
  let pendingRunnable: Block | undefined;
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!.trim();
    if (line.startsWith('#')) pendingRunnable = undefined;
    if (!line.startsWith('```') || line === '```') continue;
    const [lang = '', ...markers] = line.slice(3).trim().split(/\s+/);
    const start = i + 1;
    while (i + 1 < lines.length && lines[i + 1]!.trim() !== '```') i += 1;
    const code = lines.slice(start, i + 1).join('\n');
    i += 1;
    if (lang === 'text' && pendingRunnable !== undefined) pendingRunnable.expectedOutput = `${code}\n`;
    const block: Block = { file, line: start, lang, runnable: markers.includes('runnable'), code };
    pendingRunnable = block.runnable ? block : undefined;
    out.push(block);
  }
  return out;
}

const ALL = DOC_FILES.flatMap(blocks);

function withContext(code: string): string {
  const declared = (name: string): boolean =>
    new RegExp(`\\b(const|let|var|function)\\s+${name}\\b`).test(code) ||
    new RegExp(`\\bimport\\b[^;]*?\\b${name}\\b[^;]*?\\bfrom\\b`).test(code);
  const preamble = Object.entries(CONTEXT)
    .filter(([name]) => new RegExp(`\\b${name}\\b`).test(code) && !declared(name))
    .map(([, declaration]) => declaration);
  return `${preamble.join('\n')}\n${code}\nexport {};\n`;
}

/**
 * Where the blocks and the check's build info stay between runs (.tsbuild/, beside the tsc pass's own):
 * the check is incremental, so a run checks again only the blocks whose text changed, or all of them
 * when what they import (dist/index.d.ts and its graph) changed. Delete it to check from cold.
 */
const CHECK_DIR = join(ROOT, '.tsbuild', 'docs-snippets');

function typeProblems(found: Block[]): string[] {
  mkdirSync(CHECK_DIR, { recursive: true });
  const files = found.map((block, index) => {
    const file = join(CHECK_DIR, `${block.file.replace(/\W/g, '_')}-line-${block.line}-${index}.ts`);
    writeFileSync(file, withContext(block.code));
    return file;
  });
  // Blocks that moved or went: their old files would still be checked (and reported) otherwise.
  for (const name of readdirSync(CHECK_DIR)) {
    if (name.endsWith('.ts') && !files.includes(join(CHECK_DIR, name))) rmSync(join(CHECK_DIR, name));
  }
  const program = ts.createIncrementalProgram({
    rootNames: files,
    options: {
      strict: true,
      noEmit: true,
      incremental: true,
      tsBuildInfoFile: join(CHECK_DIR, 'snippets.tsbuildinfo'),
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2022.d.ts'], // no DOM: snippets are Node code, and the DOM declarations dominate check time
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      skipLibCheck: true,
      types: ['node'],
      typeRoots: [join(ROOT, 'node_modules/@types')],
      baseUrl: ROOT,
      paths: {
        brood: [join(ROOT, 'dist/index.d.ts')],
        zod: [join(ROOT, 'node_modules/zod')],
        // The optional peers' pages import their SDKs (the MCP server's transports, say).
        '@modelcontextprotocol/sdk/*': [join(ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/esm/*')],
      },
    },
  });
  // What ts.getPreEmitDiagnostics reports; the builder answers unchanged files from the build info.
  const diagnostics = [
    ...program.getConfigFileParsingDiagnostics(),
    ...program.getOptionsDiagnostics(),
    ...program.getSyntacticDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...program.getSemanticDiagnostics(),
  ];
  program.emit(); // noEmit: writes the build info only
  return diagnostics.map((d) => {
    const where = d.file
      ? `${d.file.fileName.split('/').at(-1)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line}`
      : '';
    return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

/** The block as a Node ES module; TypeScript is only stripped of its types (it was checked above). */
function asModule(block: Block): string {
  if (block.lang === 'js') return block.code;
  return ts.transpileModule(block.code, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
}

describe('README.md and docs/', () => {
  it('every TypeScript block type-checks against the built public API', async () => {
    assertBuilt();
    await declarationsBuilt();
    const found = ALL.filter((block) => block.lang === 'ts');
    expect(found.length).toBeGreaterThanOrEqual(10);
    expect(typeProblems(found)).toEqual([]);
  }, 300_000); // after the tsc pass in `npm test`, then one TypeScript program over every block

  it('README.md has a runnable example, and runnable blocks are TypeScript or JavaScript', () => {
    expect(ALL.some((block) => block.file === 'README.md' && block.runnable)).toBe(true);
    expect(ALL.filter((b) => b.runnable && b.lang !== 'ts' && b.lang !== 'js').map((b) => b.line)).toEqual([]);
  });

  const runnable = ALL.filter((block) => block.runnable);
  it.each(runnable.map((block) => [`${block.file}:${block.line}`, block] as const))(
    '%s runs as written',
    async (_where, block) => {
      assertBuilt();
      // Inside the repository, so `brood` resolves to this package (self-reference) and `zod` to its dependency.
      const dir = mkdtempSync(join(ROOT, '.docs-snippet-'));
      try {
        const file = join(dir, 'snippet.mjs');
        writeFileSync(file, asModule(block));
        const run = await runNode([file], { timeoutMs: 60_000 });
        expect(run.stderr).toBe('');
        expect(run.code).toBe(0);
        if (block.expectedOutput !== undefined) expect(run.stdout).toBe(block.expectedOutput);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
