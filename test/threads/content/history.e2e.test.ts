/**
 * An existing conversation in: `createAgent({ history })` against loopback providers. The first
 * request carries the history, in the provider's own wire format, before the new message (drivers in
 * pool threads and inline); a history written to a fileSessions directory is continued by
 * `resumeAgent` in a new runtime, its image written once; a fork child sees it (the fork rule: the
 * parent's completed conversation), a spawned child does not.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { inspectCommand } from '../../../src/cli/inspect.js';
import { traceCommand } from '../../../src/cli/trace.js';
import type { HistoryMessage } from '../../../src/index.js';
import { fileSessions, subagentTool } from '../../../src/index.js';
import { AN, messagesOf, OA, twoFormats, type WireMessage } from '../../support/two-formats.js';
import { textStream } from '../../unit/models/anthropic-wire.js';
import { type Handler, type Loopback, sseFrames } from '../../unit/models/loopback.js';

const IMAGE = Uint8Array.from({ length: 120 }, (_, i) => (i * 53 + 7) % 256);
const IMAGE_BASE64 = Buffer.from(IMAGE).toString('base64');

/** A conversation the host kept: an image, one answered tool call, an answer. */
const HISTORY: HistoryMessage[] = [
  {
    role: 'user',
    content: [
      { type: 'text', text: 'My name is Ada. Here is my city:' },
      { type: 'image', data: IMAGE, mediaType: 'image/png' },
    ],
  },
  {
    role: 'assistant',
    content: 'Let me look.',
    toolCalls: [{ id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
  },
  { role: 'tool', callId: 'c1', content: 'sunny, 21 C' },
  { role: 'assistant', content: 'Hello Ada, it is sunny in Paris.' },
];

/** The history as the Chat Completions format carries it. */
const CHAT_HISTORY = [
  {
    role: 'user',
    content: [
      { type: 'text', text: 'My name is Ada. Here is my city:' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${IMAGE_BASE64}` } },
    ],
  },
  {
    role: 'assistant',
    content: 'Let me look.',
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: 'sunny, 21 C' },
  { role: 'assistant', content: 'Hello Ada, it is sunny in Paris.' },
];

const dirs: string[] = [];
const formats = twoFormats();
const { makeBrood } = formats;
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** The conversation a Chat Completions request carried, without brood's system message. */
const conversationOf = (seen: Loopback['seen'], index: number) =>
  messagesOf(seen, index).filter((message) => message.role !== 'system');

const chatText = (text: string) =>
  sseFrames([{ data: { choices: [{ index: 0, delta: { content: text }, finish_reason: 'stop' }] } }, '[DONE]']);

describe('the first turn continues the history', () => {
  it.each(['worker', 'inline'] as const)(
    'Chat Completions (%s driver): the first request carries the history, then the new message',
    async (runner) => {
      formats.openai.fallback(chatText('You are Ada.'));
      const agent = await makeBrood({ runner }).createAgent({ model: OA, history: HISTORY });
      expect((await agent.run('What is my name?')).output).toBe('You are Ada.');
      expect(formats.openai.seen).toHaveLength(1);
      expect(conversationOf(formats.openai.seen, 0)).toEqual([
        ...CHAT_HISTORY,
        { role: 'user', content: 'What is my name?' },
      ]);
    },
  );

  it('Anthropic Messages: the tool call a tool_use block, its answer a tool_result, the image a base64 block', async () => {
    formats.anthropic.fallback(sseFrames(textStream('You are Ada.')));
    const agent = await makeBrood().createAgent({ model: AN, history: HISTORY });
    expect((await agent.run('What is my name?')).output).toBe('You are Ada.');
    expect(messagesOf(formats.anthropic.seen, 0)).toMatchObject([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'My name is Ada. Here is my city:' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: IMAGE_BASE64 } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'c1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello Ada, it is sunny in Paris.' }] },
      { role: 'user', content: [{ type: 'text', text: 'What is my name?' }] },
    ]);
  });
});

describe('a history in a fileSessions directory', () => {
  it('is written once (its image too) and continued by resumeAgent in a new runtime', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'brood-history-'));
    dirs.push(dir);
    formats.openai.push(chatText('You are Ada.'), chatText('Paris.'));
    const first = makeBrood({ sessions: fileSessions(dir) });
    const agent = await first.createAgent({ model: OA, id: 'ada', history: HISTORY });
    await agent.run('What is my name?');
    await first.close();

    const resumed = await makeBrood({ sessions: fileSessions(dir) }).resumeAgent('ada');
    expect((await resumed.run('And my city?')).output).toBe('Paris.');
    expect(conversationOf(formats.openai.seen, 1)).toEqual([
      ...CHAT_HISTORY,
      { role: 'user', content: 'What is my name?' },
      { role: 'assistant', content: 'You are Ada.' },
      { role: 'user', content: 'And my city?' },
    ]);
    const file = await readFile(join(dir, 'ada.jsonl'), 'utf8');
    expect(file.split(IMAGE_BASE64)).toHaveLength(2);
  });

  it('reads back in brood inspect and brood trace as an agent with its own turns only', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'brood-history-'));
    dirs.push(dir);
    formats.openai.fallback(chatText('You are Ada.'));
    const runtime = makeBrood({ sessions: fileSessions(dir) });
    await (await runtime.createAgent({ model: OA, id: 'ada', history: HISTORY })).run('What is my name?');
    await runtime.close();
    const out = { inspect: '', trace: '' };
    const streams = (key: keyof typeof out) => ({
      stdout: { write: (text: string) => (out[key] += text) },
      stderr: { write: () => true },
    });
    expect(await inspectCommand([dir, '--json'], streams('inspect'))).toBe(0);
    expect(JSON.parse(out.inspect)).toMatchObject([
      { id: 'ada', label: 'What is my name?', turns: 1, stopReasons: ['completed'] },
    ]);
    expect(await traceCommand([dir, 'ada'], streams('trace'))).toBe(0);
    const turns = (JSON.parse(out.trace) as { traceEvents: { name: string; ph: string }[] }).traceEvents.filter(
      (event) => event.ph === 'X' && event.name.startsWith('turn'),
    );
    expect(turns).toHaveLength(1);
  });
});

describe('children and the history', () => {
  /** Two delegations in one step: a fork and a spawned child, each answering its task. */
  const delegating: Handler = (req, res, seen) => {
    const messages = seen.body.messages as WireMessage[];
    const last = messages.at(-1);
    if (last?.role === 'tool') return chatText('Both done.')(req, res, seen);
    if (last?.content !== 'Delegate both.') return chatText(`did ${String(last?.content)}`)(req, res, seen);
    const call = (index: number, name: string, prompt: string) => ({
      index,
      id: `d${index}`,
      type: 'function',
      function: { name, arguments: JSON.stringify({ description: name, prompt }) },
    });
    const toolCalls = [call(0, 'fork_task', 'FORK TASK'), call(1, 'spawn_task', 'SPAWN TASK')];
    sseFrames([
      { data: { choices: [{ index: 0, delta: { tool_calls: toolCalls }, finish_reason: 'tool_calls' }] } },
      '[DONE]',
    ])(req, res, seen);
  };

  it('a fork child sees the history its parent was created with; a spawned child sees none of it', async () => {
    formats.openai.fallback(delegating);
    const runtime = makeBrood({ pool: { threads: 2 } });
    runtime.use(subagentTool({ provider: 'fork', toolName: 'fork_task', enableRunInBackground: false }));
    runtime.use(subagentTool({ provider: 'spawn', toolName: 'spawn_task', enableRunInBackground: false }));
    const parent = await runtime.createAgent({ model: OA, history: HISTORY });
    expect((await parent.run('Delegate both.')).output).toBe('Both done.');

    const childRequest = (task: string) => {
      const index = formats.openai.seen.findIndex(
        (seen) => (seen.body.messages as WireMessage[]).at(-1)?.content === task,
      );
      expect(index, `a request for ${task}`).toBeGreaterThanOrEqual(0);
      return conversationOf(formats.openai.seen, index);
    };
    // The fork rule: the parent's completed conversation (here, only the history), then the task.
    expect(childRequest('FORK TASK')).toEqual([...CHAT_HISTORY, { role: 'user', content: 'FORK TASK' }]);
    expect(childRequest('SPAWN TASK')).toEqual([{ role: 'user', content: 'SPAWN TASK' }]);
  });
});
