/**
 * Images and files in: a run's content parts reach the provider in its own wire format (Chat
 * Completions, Anthropic Messages) from a driver in a worker thread, against loopback servers; bad
 * parts are refused before anything is written; an MCP tool's image reaches the model as an image;
 * a session with an image holds it once (on disk, in memory) and is read back on resume.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Brood, BroodOptions, ContentPart } from '../../../src/index.js';
import { fileSessions, mcpTools, memorySessions } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { AN, messagesOf, OA, twoFormats } from '../../support/two-formats.js';
import {
  blockStop,
  jsonDelta,
  messageDelta,
  messageStart,
  messageStop,
  textStream,
  toolStart,
} from '../../unit/models/anthropic-wire.js';
import { sseFrames } from '../../unit/models/loopback.js';
import { type ImageMcpServer, startImageMcpServer } from './image-mcp-server.js';

/** 300 bytes that are no PNG, but their base64 is long and unique enough to count in a file. */
const IMAGE = Uint8Array.from({ length: 300 }, (_, i) => (i * 37 + 11) % 256);
const IMAGE_BASE64 = Buffer.from(IMAGE).toString('base64');
const PDF = new TextEncoder().encode('%PDF-1.4 a one-page chart');
const PDF_BASE64 = Buffer.from(PDF).toString('base64');

const chartQuestion: ContentPart[] = [
  { type: 'text', text: 'What is in this chart?' },
  { type: 'image', data: IMAGE, mediaType: 'image/png' },
  { type: 'file', data: PDF, mediaType: 'application/pdf', filename: 'chart.pdf' },
];

let mcp: ImageMcpServer;
const dirs: string[] = [];
const formats = twoFormats();
const { makeBrood } = formats;
beforeAll(async () => {
  mcp = await startImageMcpServer(IMAGE_BASE64);
});
afterAll(async () => {
  await mcp.close();
});
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const chatText = (text: string) =>
  sseFrames([{ data: { choices: [{ index: 0, delta: { content: text }, finish_reason: 'stop' }] } }, '[DONE]']);
const chatToolCall = (name: string) =>
  sseFrames([
    {
      data: {
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name, arguments: '{}' } }] },
            finish_reason: 'tool_calls',
          },
        ],
      },
    },
    '[DONE]',
  ]);
const anthropicToolCall = (name: string) =>
  sseFrames([
    messageStart(),
    toolStart(0, 'toolu_1', name),
    jsonDelta(0, '{}'),
    blockStop(0),
    messageDelta('tool_use'),
    messageStop(),
  ]);

describe('a run with an image and a PDF', () => {
  it('Chat Completions: the image as an image_url part (data URL), the PDF as a file part (file_data)', async () => {
    formats.openai.fallback(chatText('a rising line'));
    const agent = await makeBrood().createAgent({ model: OA });
    expect((await agent.run(chartQuestion)).output).toBe('a rising line');
    expect(messagesOf(formats.openai.seen, 0).at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this chart?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${IMAGE_BASE64}` } },
        { type: 'file', file: { filename: 'chart.pdf', file_data: `data:application/pdf;base64,${PDF_BASE64}` } },
      ],
    });
  });

  it('Anthropic Messages: an image block and a document block, both with a base64 source', async () => {
    formats.anthropic.fallback(sseFrames(textStream('a rising line')));
    const agent = await makeBrood().createAgent({ model: AN });
    expect((await agent.run(chartQuestion)).output).toBe('a rising line');
    expect(messagesOf(formats.anthropic.seen, 0).at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this chart?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: IMAGE_BASE64 } },
        {
          type: 'document',
          source: { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 },
          title: 'chart.pdf',
        },
      ],
    });
  });

  it('send() takes content parts too (base64 and data: URL strings as well as bytes)', async () => {
    formats.openai.fallback(chatText('ok'));
    const agent = await makeBrood().createAgent({ model: OA });
    await agent.send([
      { type: 'image', data: IMAGE_BASE64, mediaType: 'image/png' },
      { type: 'image', data: `data:image/png;base64,${IMAGE_BASE64}`, mediaType: 'image/png' },
    ]);
    await agent.whenIdle();
    const dataUrl = { type: 'image_url', image_url: { url: `data:image/png;base64,${IMAGE_BASE64}` } };
    expect(messagesOf(formats.openai.seen, 0).at(-1)).toEqual({ role: 'user', content: [dataUrl, dataUrl] });
  });
});

describe('parts refused before anything is written', () => {
  async function refused(options: BroodOptions, model: typeof OA, parts: ContentPart[]): Promise<string> {
    const agent = await makeBrood(options).createAgent({ model });
    const error = await expectCode(agent.run(parts), 'INVALID_ARGS');
    expectCode(() => agent.stream(parts), 'INVALID_ARGS'); // synchronously, like stream()'s bad options
    await expectCode(agent.send(parts), 'INVALID_ARGS');
    const { events } = await (formats.brood as Brood).sessions.read(agent.id);
    expect(events.filter((event) => event.type === 'user/message')).toEqual([]);
    expect([...formats.openai.seen, ...formats.anthropic.seen]).toEqual([]);
    return error.message;
  }

  it('a part over maxInputBytes (per part)', async () => {
    const message = await refused({ maxInputBytes: 299 }, OA, chartQuestion);
    expect(message).toContain('maxInputBytes');
  });

  it('a media type the provider format cannot carry, named', async () => {
    const text = { type: 'file', data: PDF, mediaType: 'text/csv' } as const;
    expect(await refused({}, OA, [text])).toContain('text/csv');
    expect(await refused({}, AN, [{ type: 'image', data: IMAGE, mediaType: 'image/tiff' }])).toContain('image/tiff');
  });

  it('bad base64', async () => {
    await refused({}, AN, [{ type: 'image', data: 'iVBOR*w0K', mediaType: 'image/png' }]);
  });
});

describe("an MCP tool's image", () => {
  it('Anthropic Messages: inside the tool_result block, as an image block', async () => {
    formats.anthropic.push(anthropicToolCall('mcp__charts__chart'));
    formats.anthropic.fallback(sseFrames(textStream('I see the chart')));
    const b = makeBrood();
    await b.use(mcpTools({ name: 'charts', url: mcp.url }));
    const agent = await b.createAgent({ model: AN });
    expect((await agent.run('draw the chart')).output).toBe('I see the chart');
    const answer = messagesOf(formats.anthropic.seen, 1).at(-1) as { role: string; content: Record<string, unknown>[] };
    expect(answer.role).toBe('user');
    expect(answer.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: [
          { type: 'text', text: 'the sales chart\n[image: image/png]' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: IMAGE_BASE64 } },
        ],
      },
    ]);
  });

  it('Chat Completions: the tool message keeps its text; the image follows as an image part of a user message', async () => {
    formats.openai.push(chatToolCall('mcp__charts__chart'));
    formats.openai.fallback(chatText('I see the chart'));
    const b = makeBrood();
    await b.use(mcpTools({ name: 'charts', url: mcp.url }));
    const agent = await b.createAgent({ model: OA });
    expect((await agent.run('draw the chart')).output).toBe('I see the chart');
    const [tool, media] = messagesOf(formats.openai.seen, 1).slice(-2);
    expect(tool).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'the sales chart\n[image: image/png]' });
    expect(media).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'The media returned by the tool results above:' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${IMAGE_BASE64}` } },
      ],
    });
  });
});

/** A store that outlives the runtime that wrote it, and everything it holds as text. */
async function fileStore() {
  const dir = await mkdtemp(join(tmpdir(), 'brood-parts-'));
  dirs.push(dir);
  const held = async () => {
    const names = (await readdir(dir, { recursive: true })).filter((name) => name.endsWith('.jsonl'));
    return (await Promise.all(names.map((name) => readFile(join(dir, name), 'utf8')))).join('');
  };
  return { open: () => fileSessions(dir), held };
}

async function memoryStore() {
  const store = memorySessions();
  const held = async () => {
    const headers = await store.list();
    return JSON.stringify(await Promise.all(headers.map((header) => store.read(header.id))));
  };
  return { open: () => store, held };
}

it.each([
  ['fileSessions', fileStore],
  ['memorySessions', memoryStore],
])('a session with an image (%s): its base64 is held once, and a resumed agent sends it again', async (_, make) => {
  const store = await make();
  formats.openai.fallback(chatText('noted'));
  const first = await makeBrood({ sessions: store.open() }).createAgent({ model: OA });
  await first.run(chartQuestion);
  await first.run('and the trend?');
  await (formats.brood as Brood).close();
  expect((await store.held()).split(IMAGE_BASE64).length - 1).toBe(1);

  formats.openai.reset();
  formats.openai.fallback(chatText('still rising'));
  const resumed = await makeBrood({ sessions: store.open() }).resumeAgent(first.id);
  expect((await resumed.run('and now?')).output).toBe('still rising');
  const [question] = messagesOf(formats.openai.seen, 0);
  expect(question).toMatchObject({
    role: 'user',
    content: [
      { type: 'text', text: 'What is in this chart?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${IMAGE_BASE64}` } },
      { type: 'file', file: { filename: 'chart.pdf' } },
    ],
  });
});
