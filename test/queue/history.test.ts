/**
 * createAgent({ history }) with drivers on `brood host` processes: the history crosses Redis in the
 * activation's plan (its image as the base64 kept once), and the host's first request to a loopback
 * Chat Completions server carries it before the new message; the next turn continues both.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Brood, createBrood } from '../../src/brood.js';
import type { HistoryMessage } from '../../src/index.js';
import { openAICompatible } from '../../src/models/openai.js';
import { queueRunner } from '../../src/queue/config.js';
import { type Loopback, sseFrames, startLoopback } from '../unit/models/loopback.js';
import { type HostProcess, RedisServer, redisAvailable, startHost, stopHost } from './redis-harness.js';

const IMAGE_BASE64 = Buffer.from(Uint8Array.from({ length: 64 }, (_, i) => (i * 29 + 3) % 256)).toString('base64');

const HISTORY: HistoryMessage[] = [
  {
    role: 'user',
    content: [
      { type: 'text', text: 'My name is Ada.' },
      { type: 'image', data: IMAGE_BASE64, mediaType: 'image/png' },
    ],
  },
  { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'lookup', arguments: { q: 'Ada' } }] },
  { role: 'tool', callId: 'c1', content: 'Ada Lovelace' },
  { role: 'assistant', content: 'Hello Ada.' },
];

const chatText = (text: string) =>
  sseFrames([{ data: { choices: [{ index: 0, delta: { content: text }, finish_reason: 'stop' }] } }, '[DONE]']);

describe.runIf(redisAvailable())('a history with drivers on brood host processes', () => {
  let redis: RedisServer;
  let host: HostProcess;
  let model: Loopback;
  let brood: Brood | undefined;

  beforeAll(async () => {
    [redis, model] = await Promise.all([RedisServer.start(), startLoopback()]);
    host = await startHost(redis.url, ['--concurrency', '8']);
  });
  afterEach(async () => {
    await brood?.close();
    brood = undefined;
    model.reset();
  });
  afterAll(async () => {
    await stopHost(host);
    await Promise.all([redis?.dispose(), model?.close()]);
  });

  it("the host's first request carries the history before the new message, and the next turn continues it", async () => {
    model.push(chatText('You are Ada.'), chatText('Lovelace.'));
    brood = createBrood({
      runner: queueRunner({ connection: redis.url }),
      models: [openAICompatible({ id: 'oa', baseURL: `${model.base}/v1`, models: ['gpt-x'], retry: { retries: 0 } })],
    });
    const agent = await brood.createAgent({ model: { provider: 'oa', model: 'gpt-x' }, history: HISTORY });
    expect((await agent.run('What is my name?')).output).toBe('You are Ada.');
    expect((await agent.run('And my surname?')).output).toBe('Lovelace.');

    const conversation = (index: number) =>
      ((model.seen[index]?.body.messages ?? []) as { role: string }[]).filter((message) => message.role !== 'system');
    const history = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'My name is Ada.' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${IMAGE_BASE64}` } },
        ],
      },
      {
        role: 'assistant',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":"Ada"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'Ada Lovelace' },
      { role: 'assistant', content: 'Hello Ada.' },
    ];
    expect(conversation(0)).toMatchObject([...history, { role: 'user', content: 'What is my name?' }]);
    expect(conversation(1)).toMatchObject([
      ...history,
      { role: 'user', content: 'What is my name?' },
      { role: 'assistant', content: 'You are Ada.' },
      { role: 'user', content: 'And my surname?' },
    ]);
  });
});
