/**
 * Type-level conformance: the request bodies the adapters actually sent (captured by a loopback server)
 * are type-checked against the official SDKs' request types (`openai`, `@anthropic-ai/sdk`, types only).
 * Object literals get TypeScript's excess-property check, so a field the real API does not accept, or a
 * value of the wrong shape, fails here. A deliberately wrong body proves the check can fail.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { anthropicCompatible, loadAdapter, openAICompatible } from '../../../src/models/index.js';
import type { ModelRequest } from '../../../src/models/types.js';
import { message, textStream } from './anthropic-wire.js';
import { assistant, makeRequest, tool, user } from './helpers.js';
import { json, type Loopback, sseFrames, startLoopback } from './loopback.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
let server: Loopback;
let dir: string;
beforeAll(async () => {
  server = await startLoopback();
  // Inside node_modules so `openai` and `@anthropic-ai/sdk` resolve; never part of the project's own tsc run.
  dir = await mkdtemp(join(root, 'node_modules', '.cache-brood-conformance-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

const tools = [
  {
    name: 'search',
    description: 'find things',
    parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  },
  {
    name: 'read',
    description: 'read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  },
];
const conversation = [
  user('find cats'),
  assistant('', [
    { callId: 'c1', name: 'search', arguments: '{"q":"cats"}' },
    { callId: 'c2', name: 'read', arguments: 'not json' },
  ]),
  tool('c1', 'three cats', 'search'),
  { role: 'tool' as const, callId: 'c2', name: 'read', content: 'INVALID_ARGS', isError: true },
  assistant('found them', [{ callId: 'c3', name: 'search', arguments: '{}' }]),
  tool('c3', 'more', 'search'),
  assistant('done'),
  user('again'),
];
const requests = (provider: string, model: string): ModelRequest[] => [
  makeRequest([user('hi')], { route: { provider, model } }),
  makeRequest(conversation, {
    system: 'be brief',
    tools,
    route: { provider, model, reasoningEffort: 'high', maxTokens: 20000 },
  }),
  makeRequest(conversation, { system: 'be brief', tools, route: { provider, model: `${model}-plain` } }),
];

async function openAIBodies(): Promise<unknown[]> {
  const adapter = await loadAdapter(
    openAICompatible({
      id: 'oa',
      baseURL: `${server.base}/v1`,
      temperature: 0.2,
      topP: 0.9,
      seed: 7,
      stop: ['END'],
      toolChoice: 'required',
      parallelToolCalls: false,
      responseFormat: {
        type: 'json_schema',
        json_schema: { name: 'answer', schema: { type: 'object' }, strict: true },
      },
      models: ['gpt-4o', { id: 'gpt-4o-plain', stream: false, toolChoice: { name: 'search' }, maxTokens: 300 }],
      maxTokensField: 'max_completion_tokens',
    }),
  );
  server.fallback(
    sseFrames([{ data: { choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }] } }, '[DONE]']),
  );
  for (const request of requests('oa', 'gpt-4o')) expect((await adapter.request(request)).finish).toBe('stop');
  return server.seen.splice(0).map((s) => s.body);
}

async function anthropicBodies(): Promise<unknown[]> {
  const adapter = await loadAdapter(
    anthropicCompatible({
      id: 'an',
      baseURL: server.base,
      temperature: 0.5,
      topP: 0.8,
      stop: 'END',
      toolChoice: 'required',
      parallelToolCalls: false,
      responseFormat: { type: 'json_schema', schema: { type: 'object' } },
      models: ['claude-x', { id: 'claude-x-plain', stream: false, toolChoice: { name: 'search' }, maxTokens: 300 }],
    }),
  );
  server.fallback((req, res, seen) =>
    (seen.body.stream === false
      ? json(message([{ type: 'text', text: 'ok' }], 'end_turn'))
      : sseFrames(textStream('ok')))(req, res, seen),
  );
  for (const request of requests('an', 'claude-x')) expect((await adapter.request(request)).finish).toBe('stop');
  // Thinking blocks kept from a previous answer are sent back verbatim.
  const withThinking = makeRequest(
    [
      user('q'),
      {
        role: 'assistant',
        text: '',
        toolCalls: [{ callId: 't1', name: 'search', arguments: '{"q":"x"}' }],
        reasoning: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          { type: 'redacted_thinking', data: 'opaque' },
        ],
      },
      tool('t1', 'r', 'search'),
    ],
    { tools, route: { provider: 'an', model: 'claude-x', reasoningEffort: 'medium', maxTokens: 10000 } },
  );
  expect((await adapter.request(withThinking)).finish).toBe('stop');
  return server.seen.splice(0).map((s) => s.body);
}

/**
 * The request types live in the SDKs' `resources/` modules (chat completions, messages, and the shared
 * types they use); everything else the SDKs declare — the client classes, streaming helpers, their
 * Node typings — is left unresolved (any), which cuts the program from ~500 files to ~70.
 */
const REQUEST_TYPE_MODULES = /node_modules\/(openai|@anthropic-ai\/sdk)\/resources\/(chat|shared|completions|messages)/;

/** One program for all files (loading the SDK typings dominates the cost); errors per file. */
function typeErrors(files: string[]): string[][] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
    lib: ['lib.es2022.d.ts'], // no DOM
  };
  const host = ts.createCompilerHost(options);
  host.resolveModuleNameLiterals = (literals, containingFile, _redirect, resolveOptions) =>
    literals.map((literal) => {
      const resolved = ts.resolveModuleName(literal.text, containingFile, resolveOptions, host);
      const file = resolved.resolvedModule?.resolvedFileName;
      return file !== undefined && REQUEST_TYPE_MODULES.test(file) ? resolved : { resolvedModule: undefined };
    });
  const program = ts.createProgram(files, options, host);
  return files.map((file) =>
    ts
      .getPreEmitDiagnostics(program, program.getSourceFile(file))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
  );
}

function source(bodies: { openai: unknown[]; anthropic: unknown[] }): string {
  const lines = [
    "import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';",
    "import type { MessageCreateParams } from '@anthropic-ai/sdk/resources/messages';",
    ...bodies.openai.map(
      (b, i) => `export const openai${i}: ChatCompletionCreateParams = ${JSON.stringify(b, null, 2)};`,
    ),
    ...bodies.anthropic.map(
      (b, i) => `export const anthropic${i}: MessageCreateParams = ${JSON.stringify(b, null, 2)};`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

it('every request body the adapters send type-checks against the official SDK request types', async () => {
  const bodies = { openai: await openAIBodies(), anthropic: await anthropicBodies() };
  expect(bodies.openai).toHaveLength(3);
  expect(bodies.anthropic).toHaveLength(4);
  // The bodies exercise the interesting fields (so the check covers them), then the check itself.
  expect(bodies.openai[1]).toMatchObject({
    reasoning_effort: 'high',
    max_completion_tokens: 20000,
    tool_choice: 'required',
    stream_options: { include_usage: true },
  });
  expect(bodies.anthropic[1]).toMatchObject({
    thinking: { type: 'enabled' },
    tool_choice: { type: 'any', disable_parallel_tool_use: true },
  });
  expect((bodies.anthropic[3] as { thinking?: unknown }).thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });

  const good = join(dir, 'bodies.ts');
  await writeFile(good, source(bodies));

  // Negative control: a field neither API has, and a wrong value shape, must be reported.
  const wrong = join(dir, 'wrong.ts');
  const broken = {
    openai: [{ ...(bodies.openai[0] as object), max_output_tokens: 5 }],
    anthropic: [
      { ...(bodies.anthropic[0] as object), seed: 1 },
      { ...(bodies.anthropic[0] as object), tool_choice: { type: 'required' } },
    ],
  };
  await writeFile(wrong, source(broken));
  const [goodErrors, wrongErrors] = typeErrors([good, wrong]);
  expect(goodErrors).toEqual([]);
  const errors = wrongErrors!.join('\n');
  expect(errors).toMatch(/'"max_output_tokens"' does not exist in type 'ChatCompletionCreateParamsStreaming'/);
  expect(errors).toMatch(/'"seed"' does not exist in type 'MessageCreateParamsStreaming'/);
  expect(errors).toMatch(/"required"/);
}, 120_000);
