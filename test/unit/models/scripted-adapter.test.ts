import { describe, expect, it } from 'vitest';
import { hasFaultTurns, loadAdapter, type ScriptedOptions, scriptedModels } from '../../../src/models/index.js';
import { createScriptedAdapter } from '../../../src/models/scripted-adapter.js';
import type { ChatMessage } from '../../../src/models/types.js';
import { expectCode } from '../../support/codes.js';
import { assistant, makeRequest, tool, user } from './helpers.js';

function adapterFor(options: Omit<ScriptedOptions, 'id'>) {
  return createScriptedAdapter(scriptedModels({ id: 'sc', ...options }));
}

const research = {
  match: 'research',
  turns: [
    {
      toolCalls: [
        { name: 'search', arguments: { q: 'x' } },
        { name: 'read', arguments: '{"broken' },
      ],
      text: 'looking',
    },
    { text: 'found: {{results}} for {{prompt}}' },
  ],
};

describe('scripted adapter', () => {
  it('plays turns by position with deterministic call ids', async () => {
    const adapter = adapterFor({ scripts: [research] });
    const first = await adapter.request(makeRequest([user('please research cats')]));
    expect(first.finish).toBe('tool-calls');
    expect(first.text).toBe('looking');
    expect(first.toolCalls).toEqual([
      { callId: 'call_0_0', name: 'search', arguments: '{"q":"x"}' },
      { callId: 'call_0_1', name: 'read', arguments: '{"broken' },
    ]);
    const again = await adapter.request(makeRequest([user('please research cats')]));
    expect(again.toolCalls.map((c) => c.callId)).toEqual(['call_0_0', 'call_0_1']);

    const history: ChatMessage[] = [
      user('please research cats'),
      assistant('looking', first.toolCalls),
      tool('call_0_0', 'r1'),
      tool('call_0_1', 'r2'),
    ];
    const second = await adapter.request(makeRequest(history));
    expect(second).toMatchObject({ finish: 'stop', text: 'found: r1\nr2 for please research cats', toolCalls: [] });
  });

  it('answers {{results}} past the end of the script', async () => {
    const adapter = adapterFor({ scripts: [{ match: 'go', turns: [{ toolCalls: [{ name: 't', arguments: {} }] }] }] });
    const history = [
      user('go'),
      assistant('', [{ callId: 'call_0_0', name: 't', arguments: '{}' }]),
      tool('call_0_0', 'A'),
      tool('x', 'B'),
    ];
    expect(await adapter.request(makeRequest(history))).toMatchObject({ finish: 'stop', text: 'A\nB' });
    const later = [...history, assistant('A\nB'), user('more')];
    // Results are only those after the last assistant message: none here.
    expect(await adapter.request(makeRequest(later))).toMatchObject({ finish: 'stop', text: '' });
  });

  it('picks the first matching script, substring or /regex/flags', async () => {
    const adapter = adapterFor({
      scripts: [
        { match: '/^hello\\s+WORLD$/i', turns: [{ text: 'regex' }] },
        { match: 'hello', turns: [{ text: 'substring' }] },
        { match: 'hello', turns: [{ text: 'shadowed' }] },
      ],
    });
    expect((await adapter.request(makeRequest([user('Hello   world')]))).text).toBe('regex');
    expect((await adapter.request(makeRequest([user('say hello')]))).text).toBe('substring');
    const sticky = adapterFor({ scripts: [{ match: '/a/g', turns: [{ text: 'g' }] }] });
    for (let i = 0; i < 3; i++) expect((await sticky.request(makeRequest([user('a')]))).text).toBe('g');
  });

  it('matches and positions a fork child from ownStart', async () => {
    const adapter = adapterFor({
      scripts: [
        { match: 'parent task', turns: [{ text: 'parent answer' }] },
        { match: 'child task', turns: [{ text: 'child first' }, { text: 'child second: {{prompt}}' }] },
      ],
    });
    const seed = [user('parent task'), assistant('parent answer'), user('parent again'), assistant('x')];
    const child = makeRequest([...seed, user('child task')], { ownStart: seed.length });
    expect((await adapter.request(child)).text).toBe('child first');
    const childLater = makeRequest([...seed, user('child task'), assistant('child first'), user('next')], {
      ownStart: seed.length,
    });
    expect((await adapter.request(childLater)).text).toBe('child second: child task');
  });

  it('identical siblings each get the whole script', async () => {
    const adapter = adapterFor({ scripts: [{ match: 'sib', turns: [{ text: 'one' }, { text: 'two' }] }] });
    const results = await Promise.all([1, 2, 3].map(() => adapter.request(makeRequest([user('sib')]))));
    expect(results.map((r) => r.text)).toEqual(['one', 'one', 'one']);
  });

  it('maps finish turns', async () => {
    const adapter = adapterFor({
      scripts: [
        { match: 'a', turns: [{ finish: 'max-tokens', text: 'cut {{prompt}}' }] },
        { match: 'b', turns: [{ finish: 'refusal' }] },
        { match: 'c', turns: [{ finish: 'error' }] },
      ],
    });
    expect(await adapter.request(makeRequest([user('a')]))).toMatchObject({ finish: 'max-tokens', text: 'cut a' });
    expect(await adapter.request(makeRequest([user('b')]))).toMatchObject({ finish: 'refusal', text: '' });
    expect((await adapter.request(makeRequest([user('c')]))).finish).toBe('error');
  });

  it('falls back to echo or error', async () => {
    const echo = adapterFor({ scripts: [research] });
    expect(await echo.request(makeRequest([user('unmatched'), assistant('u'), user('then')]))).toMatchObject({
      finish: 'stop',
      text: 'unmatched',
    });
    const strict = adapterFor({ fallback: 'error' });
    const response = await strict.request(makeRequest([user('unmatched')]));
    expect(response.finish).toBe('error');
    expect(response.diagnostic).toMatch(/no script/);
  });

  it('computes usage per SPEC arithmetic', async () => {
    const adapter = adapterFor({
      scripts: [{ match: 'u', turns: [{ toolCalls: [{ name: 't', arguments: 'abc' }], text: 'hello' }] }],
    });
    const messages = [
      user('u1234'),
      assistant('xy', [{ callId: 'c', name: 't', arguments: '{"a":1}' }]),
      tool('c', 'result'),
      user('q'),
    ];
    const response = await adapter.request(makeRequest(messages.slice(0, 1), { system: 'sys' }));
    // input: 'sys' (3) + 'u1234' (5) = 8 -> 2; output: 'hello' (5) + 'abc' (3) = 8 -> 2
    expect(response.usage).toEqual({ inputTokens: 2, outputTokens: 2 });
    const past = await adapter.request(makeRequest(messages, { system: 'sys' }));
    // input: 3 + 5 + 2 + 7 + 6 + 1 = 24 -> 6; past the end answers '{{results}}' = 'result' (6) -> 2
    expect(past.text).toBe('result');
    expect(past.usage).toEqual({ inputTokens: 6, outputTokens: 2 });
    const odd = await adapter.request(makeRequest([user('u')], { system: 'ab' }));
    expect(odd.usage).toEqual({ inputTokens: 1, outputTokens: 2 });
  });

  it('streams the reply text through onTextDelta', async () => {
    const deltas: string[] = [];
    const adapter = adapterFor({ scripts: [{ match: 'x', turns: [{ text: 'streamed' }] }] });
    await adapter.request(makeRequest([user('x')], { onTextDelta: (d) => deltas.push(d) }));
    expect(deltas.join('')).toBe('streamed');
  });

  it('waits latencyMs and rejects ABORTED promptly on abort', async () => {
    const adapter = adapterFor({
      scripts: [
        { match: 'slow', turns: [{ text: 'done' }], latencyMs: 60 },
        { match: 'glacial', turns: [{ text: 'x' }], latencyMs: 60_000 },
      ],
    });
    const started = performance.now();
    expect((await adapter.request(makeRequest([user('slow')]))).text).toBe('done');
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);

    const controller = new AbortController();
    const pending = adapter.request(makeRequest([user('glacial')], { signal: controller.signal }));
    const abortAt = performance.now();
    setTimeout(() => controller.abort(), 20);
    await expectCode(pending, 'ABORTED');
    expect(performance.now() - abortAt).toBeLessThan(1000);
    const already = new AbortController();
    already.abort();
    await expectCode(adapter.request(makeRequest([user('slow')], { signal: already.signal })), 'ABORTED');
  });

  it('burns cpuMs synchronously', async () => {
    const adapter = adapterFor({ scripts: [{ match: 'cpu', turns: [{ text: 'ok' }], cpuMs: 40 }] });
    const started = performance.now();
    let ticked = false;
    setImmediate(() => (ticked = true));
    const pending = adapter.request(makeRequest([user('cpu')]));
    expect(ticked).toBe(false);
    await pending;
    expect(performance.now() - started).toBeGreaterThanOrEqual(39);
  });

  it('refuses fault turns on the main thread without running them', async () => {
    const config = scriptedModels({
      id: 'f',
      scripts: (['exit', 'throw', 'oom', 'hang'] as const).map((fault) => ({ match: fault, turns: [{ fault }] })),
    });
    expect(hasFaultTurns(config)).toBe(true);
    expect(hasFaultTurns(scriptedModels({ id: 'g', scripts: [research] }))).toBe(false);
    const adapter = await loadAdapter(config);
    for (const fault of ['exit', 'throw', 'oom', 'hang']) {
      const response = await adapter.request(makeRequest([user(fault)], { system: 'long system prompt' }));
      expect(response.finish).toBe('error');
      expect(response.diagnostic).toBe(`fault turn '${fault}' refused on the main thread`);
      expect(response.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    }
  });

  it('survives a structured clone of its config', async () => {
    const adapter = createScriptedAdapter(structuredClone(scriptedModels({ id: 'c', scripts: [research] })));
    expect((await adapter.request(makeRequest([user('research')]))).finish).toBe('tool-calls');
  });
});
