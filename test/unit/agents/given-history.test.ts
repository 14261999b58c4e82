/**
 * createAgent({ history }): the host's conversation is checked at createAgent (INVALID_ARGS naming the
 * message, nothing created on failure), kept as the model history, written once to the session, and
 * the agent's own turns start after it. Inline runner: the request-level checks against real
 * providers are in test/threads/content/history.e2e.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkHistory, type HistoryMessage, loggedHistory } from '../../../src/agents/given-history.js';
import type { Brood, BroodOptions } from '../../../src/index.js';
import { fileSessions, memorySessions, openAICompatible, scriptedModels } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { inlineBrood } from '../../support/runtime.js';

const PNG_BASE64 = Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64');
const LIMITS = { maxInputBytes: 1024, format: undefined };
const SCRIPTED = { provider: 'scripted', model: 'scripted' };

/** A conversation with one answered tool call, as a host would keep it. */
const WEATHER: HistoryMessage[] = [
  { role: 'user', content: 'Weather in Paris?' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Paris' } }],
  },
  { role: 'tool', callId: 'c1', content: 'sunny, 21 C' },
  { role: 'assistant', content: 'It is sunny in Paris.' },
];

describe('a history as brood keeps it', () => {
  it('becomes the model history: arguments as JSON text, each tool message named after the call it answers', () => {
    expect(checkHistory(WEATHER, LIMITS)).toEqual([
      { role: 'user', text: 'Weather in Paris?' },
      {
        role: 'assistant',
        text: '',
        toolCalls: [{ callId: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      },
      { role: 'tool', callId: 'c1', name: 'get_weather', content: 'sunny, 21 C', isError: false },
      { role: 'assistant', text: 'It is sunny in Paris.', toolCalls: [] },
    ]);
  });

  it('takes arguments as an object or as the JSON text of one, kept as the model would have written them', () => {
    const [, assistant] = checkHistory(
      [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'a', name: 't', arguments: '{ "x": 1 }' },
            { id: 'b', name: 't', arguments: {} },
          ],
        },
        { role: 'tool', callId: 'b', content: 'two' },
        { role: 'tool', callId: 'a', content: 'one' },
      ],
      LIMITS,
    );
    expect(assistant).toMatchObject({ toolCalls: [{ arguments: '{ "x": 1 }' }, { arguments: '{}' }] });
  });

  it('keeps content parts: a user image as base64, a tool image with a placeholder in its text', () => {
    const image = { type: 'image' as const, data: `data:image/png;base64,${PNG_BASE64}`, mediaType: 'image/png' };
    const checked = checkHistory(
      [
        { role: 'user', content: [{ type: 'text', text: 'Look' }, image] },
        {
          role: 'assistant',
          content: [{ type: 'text', text: 'Snapping.' }],
          toolCalls: [{ id: 'c', name: 'snap', arguments: {} }],
        },
        { role: 'tool', callId: 'c', content: [{ type: 'text', text: 'the shot:' }, image] },
      ],
      LIMITS,
    );
    const kept = { type: 'image', data: PNG_BASE64, mediaType: 'image/png' };
    expect(checked[0]).toEqual({ role: 'user', text: 'Look', parts: [{ type: 'text', text: 'Look' }, kept] });
    expect(checked[1]).toMatchObject({ role: 'assistant', text: 'Snapping.' });
    expect(checked[2]).toMatchObject({
      content: 'the shot:\n[image: image/png]',
      parts: [{ type: 'text', text: 'the shot:' }, kept],
    });
  });
});

describe('a history is refused with INVALID_ARGS naming what is wrong', () => {
  const refused: [string, unknown, RegExp][] = [
    ['not an array', { role: 'user', content: 'x' }, /must be an array/],
    ['a message that is not an object', ['hi'], /history\[0\] is not a plain object/],
    [
      "a system message (the system prompt is brood's)",
      [{ role: 'system', content: 'Be terse.' }],
      /history\[0\] has role 'system'/,
    ],
    ['an unknown role', [{ role: 'developer', content: 'x' }], /history\[0\] has role "developer"/],
    ['a key of another format', [{ role: 'assistant', content: '', tool_calls: [] }], /unknown key 'tool_calls'/],
    ['a message without content', [{ role: 'user' }], /history\[0\] has no 'content'/],
    [
      'content that is neither a string nor parts',
      [{ role: 'user', content: 42 }],
      /history\[0\]: a message must be a string/,
    ],
    [
      'a malformed content part',
      [{ role: 'user', content: [{ type: 'audio' }] }],
      /history\[0\]: content part 0 has type "audio"/,
    ],
    [
      'an image in an assistant message',
      [{ role: 'assistant', content: [{ type: 'image', data: PNG_BASE64, mediaType: 'image/png' }] }],
      /history\[0\] is an assistant message with an image part/,
    ],
    [
      'a tool call without an id',
      [{ role: 'assistant', content: '', toolCalls: [{ name: 't', arguments: {} }] }],
      /toolCalls\[0\] has no non-empty string 'id'/,
    ],
    [
      'arguments that are not JSON',
      [{ role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 't', arguments: '{x' }] }],
      /toolCalls\[0\] has 'arguments' that is a string but not JSON/,
    ],
    [
      'arguments that are an array',
      [{ role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 't', arguments: [1] }] }],
      /neither an object nor its JSON text/,
    ],
    [
      'a tool call no tool message answers',
      [
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 't', arguments: {} }] },
        { role: 'user', content: 'and?' },
      ],
      /history\[0\] made call\(s\) 'c1' that no tool message answers before history\[1\]/,
    ],
    [
      'a history that ends with an open call',
      [{ role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 't', arguments: {} }] }],
      /'c1' that no tool message answers before the end of the history/,
    ],
    [
      'a tool message that answers no call',
      [{ role: 'tool', callId: 'c9', content: 'x' }],
      /answers call 'c9', which no assistant message/,
    ],
    [
      'a call answered twice',
      [
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 't', arguments: {} }] },
        { role: 'tool', callId: 'c1', content: 'x' },
        { role: 'tool', callId: 'c1', content: 'x' },
      ],
      /answers call 'c1', which is answered already/,
    ],
    [
      'two calls with one id',
      [
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 't', arguments: {} }] },
        { role: 'tool', callId: 'c1', content: 'x' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 't', arguments: {} }] },
      ],
      /history\[2\] makes a call with id 'c1' that an earlier call has/,
    ],
  ];
  it.each(refused)('%s', (_name, history, message) => {
    expect(expectCode(() => checkHistory(history, LIMITS), 'INVALID_ARGS').message).toMatch(message);
  });

  it('a part over maxInputBytes, naming its message', () => {
    const big = [{ role: 'user', content: [{ type: 'image', data: new Uint8Array(2048), mediaType: 'image/png' }] }];
    const error = expectCode(() => checkHistory(big, LIMITS), 'INVALID_ARGS');
    expect(error.message).toMatch(/^history\[0\]: content part 0 \(image\) is 2048 bytes, over maxInputBytes/);
    expect(error.details).toEqual({ bytes: 2048, maxInputBytes: 1024 });
  });

  it("a medium the provider's format cannot carry, naming its media type", () => {
    const tiff = [{ role: 'user', content: [{ type: 'image', data: PNG_BASE64, mediaType: 'image/tiff' }] }];
    const error = expectCode(() => checkHistory(tiff, { ...LIMITS, format: 'chat-completions' }), 'INVALID_ARGS');
    expect(error.message).toMatch(/history\[0\]: .*image\/tiff/);
  });

  it('a message whose getter throws (read once, under guard)', () => {
    const hostile = {
      role: 'user',
      get content(): string {
        throw new Error('boom');
      },
    };
    expect(expectCode(() => checkHistory([hostile], LIMITS), 'INVALID_ARGS').message).toMatch(
      /could not be read: boom/,
    );
  });
});

describe('a history read back from a session', () => {
  it('is the messages written, and a malformed one is SESSION_CORRUPT', () => {
    const kept = checkHistory(WEATHER, LIMITS);
    expect(loggedHistory(JSON.parse(JSON.stringify(kept)))).toEqual(kept);
    expectCode(() => loggedHistory([{ role: 'user' }]), 'SESSION_CORRUPT');
    expectCode(() => loggedHistory([{ role: 'tool', callId: 'c', content: 'x' }]), 'SESSION_CORRUPT');
    expectCode(() => loggedHistory({ messages: [] }), 'SESSION_CORRUPT');
  });
});

describe('createAgent({ history })', () => {
  let brood: Brood | undefined;
  afterEach(async () => {
    await brood?.close();
    brood = undefined;
  });
  const open = (options: BroodOptions = {}): Brood => {
    brood = inlineBrood({ sessions: memorySessions({ retain: 'all' }), ...options });
    return brood;
  };

  it('refuses a bad history with INVALID_ARGS and creates no agent and no session', async () => {
    const runtime = open();
    await expectCode(
      runtime.createAgent({ model: SCRIPTED, id: 'a1', history: [{ role: 'system', content: 'x' }] as never }),
      'INVALID_ARGS',
    );
    await expectCode(runtime.createAgent({ model: SCRIPTED, id: 'a1', history: 'hi' as never }), 'INVALID_ARGS');
    expect(await runtime.sessions.list()).toEqual([]);
    // The id was never taken: the same agent can be created with a good history.
    await runtime.createAgent({ model: SCRIPTED, id: 'a1', history: WEATHER });
  });

  it("holds the history to the runtime's maxInputBytes and to what the route's provider can carry", async () => {
    const runtime = open({
      maxInputBytes: 16,
      models: [openAICompatible({ id: 'oa', baseURL: 'http://127.0.0.1:9/v1', models: ['gpt-x'] })],
    });
    const image = (bytes: number, mediaType: string): HistoryMessage[] => [
      { role: 'user', content: [{ type: 'image', data: new Uint8Array(bytes), mediaType }] },
    ];
    const model = { provider: 'oa', model: 'gpt-x' };
    const tooBig = await expectCode(runtime.createAgent({ model, history: image(17, 'image/png') }), 'INVALID_ARGS');
    expect(tooBig.details).toEqual({ bytes: 17, maxInputBytes: 16 });
    const tiff = await expectCode(runtime.createAgent({ model, history: image(8, 'image/tiff') }), 'INVALID_ARGS');
    expect(tiff.message).toContain('image/tiff');
    expect(await runtime.sessions.list()).toEqual([]);
    await runtime.createAgent({ model, history: image(16, 'image/png') });
  });

  it('writes the history once, before any turn, as the model history it will continue', async () => {
    const runtime = open();
    const agent = await runtime.createAgent({ model: SCRIPTED, history: WEATHER });
    await agent.run('And tomorrow?');
    const { events } = await runtime.sessions.read(agent.id);
    const written = events.filter((event) => event.type === 'agent/history');
    expect(written).toHaveLength(1);
    expect(written[0]?.data).toEqual({ messages: checkHistory(WEATHER, LIMITS) });
    expect(events.findIndex((event) => event.type === 'agent/history')).toBeLessThan(
      events.findIndex((event) => event.type === 'turn/start'),
    );
  });

  it("the agent's own turns start after it: a script is matched on the new message and played from its first step", async () => {
    const runtime = open({
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [{ match: 'And tomorrow?', turns: [{ text: 'first step' }, { text: 'second step' }] }],
        }),
      ],
    });
    const agent = await runtime.createAgent({ model: SCRIPTED, history: WEATHER });
    expect((await agent.run('And tomorrow?')).output).toBe('first step');
    expect((await agent.run('and after?')).output).toBe('second step');
  });

  it('a resumed agent still starts its own turns after the history (a new runtime over the same files)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'brood-history-'));
    try {
      const models = [
        scriptedModels({
          id: 'scripted',
          scripts: [{ match: 'And tomorrow?', turns: [{ text: 'first step' }, { text: 'second step' }] }],
        }),
      ];
      const first = inlineBrood({ sessions: fileSessions(dir), models });
      const agent = await first.createAgent({ model: SCRIPTED, id: 'kept', history: WEATHER });
      expect((await agent.run('And tomorrow?')).output).toBe('first step');
      await first.close();
      const resumed = await open({ sessions: fileSessions(dir), models }).resumeAgent('kept');
      expect((await resumed.run('and after?')).output).toBe('second step');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an empty history is no history: nothing is written', async () => {
    const runtime = open();
    const agent = await runtime.createAgent({ model: SCRIPTED, history: [] });
    await agent.run('hi');
    const { events } = await runtime.sessions.read(agent.id);
    expect(events.some((event) => event.type === 'agent/history')).toBe(false);
  });
});
