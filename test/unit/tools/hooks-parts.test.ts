/**
 * Hooks and content parts: a hook may answer with `ContentPart[]` (checked like a run's message), its
 * image reaches the model as an image, and afterToolCall reads a result that has media as parts.
 */
import { afterEach, expect, it } from 'vitest';
import { type Brood, scriptedModels, type ToolHooks } from '../../../src/index.js';
import { afterCall } from '../../../src/tools/hooks.js';
import type { ToolContext } from '../../../src/types.js';
import { echoTool } from '../../support/echo-tool.js';
import { route } from '../../support/route.js';
import { inlineBrood } from '../../support/runtime.js';

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const PNG_BASE64 = Buffer.from(PNG).toString('base64');

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

/** The model calls `echo` once, then answers with the results it read and the media it was shown. */
function runtime(hooks: ToolHooks) {
  const runs: string[] = [];
  brood = inlineBrood({
    hooks,
    onDiagnostic: () => undefined, // a failing hook's stack: hooks.test.ts checks it is told
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          {
            match: 'go',
            turns: [{ toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }] }, { text: '{{results}} | {{media}}' }],
          },
        ],
      }),
    ],
  });
  brood.tools.register(echoTool(runs));
  return { b: brood, runs };
}

it("afterToolCall's content parts are what the model reads: its image reaches the model, the session keeps it", async () => {
  const { b } = runtime({
    afterToolCall: () => ({
      content: [
        { type: 'text', text: 'a chart' },
        { type: 'image', data: PNG, mediaType: 'image/png' },
      ],
      isError: false,
    }),
  });
  const agent = await b.createAgent({ model: route });
  expect((await agent.run('go')).output).toBe('a chart\n[image: image/png] | image image/png (8 bytes)');
  const result = (await b.sessions.read(agent.id)).events.find((event) => event.type === 'tool/result');
  expect(result?.data).toMatchObject({
    content: 'a chart\n[image: image/png]',
    parts: [
      { type: 'text', text: 'a chart' },
      { type: 'image', data: PNG_BASE64, mediaType: 'image/png' },
    ],
  });
});

it("beforeToolCall's short-circuit may answer with content parts; the tool does not run", async () => {
  const { b, runs } = runtime({
    beforeToolCall: () => ({ result: [{ type: 'image', data: PNG_BASE64, mediaType: 'image/png' }] }),
  });
  const agent = await b.createAgent({ model: route });
  expect((await agent.run('go')).output).toBe('[image: image/png] | image image/png (8 bytes)');
  expect(runs).toEqual([]);
});

it("a hook's malformed parts fail that call (the model reads why), and the turn goes on", async () => {
  const { b } = runtime({
    afterToolCall: () => ({
      content: [{ type: 'image', data: 'not base64!', mediaType: 'image/png' }],
      isError: false,
    }),
  });
  const agent = await b.createAgent({ model: route });
  const result = await agent.run('go');
  expect(result.stopReason).toBe('completed');
  expect(result.output).toMatch(/^Error: afterToolCall returned content that is not a string or content parts/);
});

it('afterToolCall reads a result with media as its content parts', async () => {
  const seen: unknown[] = [];
  const parts = [
    { type: 'text' as const, text: 'the chart' },
    { type: 'image' as const, data: PNG_BASE64, mediaType: 'image/png' },
  ];
  const call = { name: 'chart', arguments: {}, callId: 'c1', agentId: 'a1', depth: 0 };
  const ctx = { callId: 'c1', signal: new AbortController().signal } as unknown as ToolContext;
  await afterCall(
    { afterToolCall: (_call, result) => void seen.push(result) },
    call,
    { isError: false, content: 'the chart\n[image: image/png]', parts },
    ctx,
  );
  expect(seen).toEqual([{ content: parts, isError: false }]);
});
