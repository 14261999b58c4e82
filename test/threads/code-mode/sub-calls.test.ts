/**
 * The calls a run_code program makes, as the parent runs them. They are bounded
 * like an assistant message's calls (maxParallelToolCalls in flight, a tool that is not
 * concurrencySafe alone); a program's end aborts what it left outstanding; a result larger than
 * codeResourceLimits.maxOutputBytes is refused before it crosses; results are keyed by the program,
 * never by the model's call id, and are not kept once delivered. Real pool and sandbox threads.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, BroodOptions, SessionEvent, ToolContext } from '../../../src/index.js';
import { createBrood, defineTool, moduleAdapter, scriptedModels } from '../../../src/index.js';
import { ofType as eventsOfType } from '../../support/events.js';
import { forceGc } from '../../support/load-harness.js';
import { route } from '../../support/route.js';

type Scripts = NonNullable<Parameters<typeof scriptedModels>[0]['scripts']>;

const MB = 1024 * 1024;
let brood: Brood | undefined;

afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

/** A script whose first step runs `code` in run_code, then answers with the tool results. */
function program(match: string, code: string): Scripts[number] {
  return {
    match,
    turns: [
      { toolCalls: [{ name: 'run_code', arguments: { description: match, code } }] },
      { text: 'after: {{results}}' },
    ],
  };
}

function start(scripts: Scripts, options: Partial<BroodOptions> = {}): Brood {
  brood = createBrood({
    codeMode: 'code',
    models: [scriptedModels({ id: 'scripted', scripts })],
    pool: { threads: 1 },
    ...options,
  });
  return brood;
}

function tool(name: string, concurrencySafe: boolean, execute: (args: never, ctx: ToolContext) => unknown) {
  return defineTool({
    name,
    description: name,
    parameters: { type: 'object', properties: {}, additionalProperties: true },
    concurrencySafe,
    execute,
  });
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function runCodeResults(b: Brood, agentId: string) {
  const { events } = await b.sessions.read(agentId);
  return eventsOfType(events, 'tool/result').map((e) => e.data);
}

const threadsOf = (events: SessionEvent[]) => eventsOfType(events, 'model/request').map((event) => event.data.threadId);

describe('a program that floods its sub-calls', () => {
  it('1,000 calls of a 512 KB tool, then a 1,001st: CODE_LIMIT, the turn goes on, same thread, the parent stays small, a sibling is served', async () => {
    const big = 'x'.repeat(512 * 1024);
    const flood =
      'const all = []; for (let i = 0; i < 1001; i++) all.push(tools.big({})); await Promise.all(all); return "all";';
    const b = start([program('flood', flood), program('trivial', 'return await tools.tiny({});')]);
    b.tools.register(
      tool('big', true, async () => {
        await wait(5);
        return big;
      }),
    );
    b.tools.register(tool('tiny', true, () => 'tiny'));
    // Every agent shares the pool's one thread; two programs at once start its two sandbox threads.
    const warm = [await b.createAgent({ model: route }), await b.createAgent({ model: route })];
    await Promise.all(warm.map((agent) => agent.run('trivial')));
    const [flooding, sibling] = [await b.createAgent({ model: route }), await b.createAgent({ model: route })];

    forceGc();
    const base = process.memoryUsage().rss;
    let peak = base;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 10);
    const [flooded, served] = await Promise.all([flooding.run('flood'), sibling.run('trivial')]).finally(() =>
      clearInterval(sampler),
    );

    expect(flooded.stopReason).toBe('completed');
    const [result] = await runCodeResults(b, flooding.id);
    expect(result).toMatchObject({ name: 'run_code', isError: true, errorCode: 'CODE_LIMIT' });
    expect(result!.content).toContain('more than 1000 tool calls (codeResourceLimits.maxToolCalls)');
    expect(flooded.output).toContain('after: Error: run_code made more than 1000 tool calls');
    expect(served).toMatchObject({ stopReason: 'completed', output: 'after: tiny' });
    // Nothing was recycled: every model request of both agents came from the one thread.
    const threads = new Set<unknown>();
    for (const agent of [...warm, flooding, sibling])
      for (const thread of threadsOf((await b.sessions.read(agent.id)).events)) threads.add(thread);
    expect(threads.size).toBe(1);
    expect(peak - base).toBeLessThan(100 * MB);
  });
});

describe('bounds on a program’s calls', () => {
  it('at most maxParallelToolCalls in flight; a tool that is not concurrencySafe runs alone, in order', async () => {
    const code = [
      'const wide = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => tools.wide({ i })));',
      'const narrow = await Promise.all([0, 1, 2, 3].map((i) => tools.narrow({ i })));',
      'const mixed = await Promise.all([tools.wide({ i: 0 }), tools.wide({ i: 1 }), tools.narrow({ i: 9 }), tools.wide({ i: 2 })]);',
      'return [wide, narrow, mixed];',
    ].join('\n');
    const b = start([program('bounded', code)], { maxParallelToolCalls: 3 });
    let inFlight = 0;
    const most = { wide: 0, narrow: 0 };
    const running = { wide: 0, narrow: 0 };
    const othersAtNarrowStart: number[] = [];
    const order: string[] = [];
    const body = (name: 'wide' | 'narrow') => async (args: { i: number }) => {
      if (name === 'narrow') othersAtNarrowStart.push(inFlight);
      order.push(`${name}${args.i}`);
      inFlight += 1;
      running[name] += 1;
      most[name] = Math.max(most[name], running[name]);
      await wait(30);
      running[name] -= 1;
      inFlight -= 1;
      return args.i;
    };
    b.tools.register(tool('wide', true, body('wide')));
    b.tools.register(tool('narrow', false, body('narrow')));
    const agent = await b.createAgent({ model: route });
    const turn = await agent.run('bounded please');

    expect(turn.output).toBe('after: [[0,1,2,3,4,5,6,7,8],[0,1,2,3],[0,1,9,2]]');
    expect(most).toEqual({ wide: 3, narrow: 1 });
    expect(othersAtNarrowStart).toEqual([0, 0, 0, 0, 0]);
    // Calls start in the order the program made them: the last wide call waits for the narrow one.
    expect(order.slice(-4)).toEqual(['wide0', 'wide1', 'narrow9', 'wide2']);
  });

  it('results reach the program no faster than it takes them: a call starts only once the reply of one of the maxParallelToolCalls before it was taken', async () => {
    // Ten calls at once, then each result taken after 40 ms of work: with two out at a time, the
    // tenth call cannot start before eight results were taken, at least 8 × 40 ms after the first.
    const code = [
      'const calls = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => tools.item({ i }));',
      'for (const call of calls) {',
      '  await call;',
      '  const until = Date.now() + 40;',
      '  while (Date.now() < until) {}',
      '}',
      "return 'taken';",
    ].join('\n');
    const b = start([program('paced', code)], { maxParallelToolCalls: 2 });
    const starts: number[] = [];
    b.tools.register(
      tool('item', true, () => {
        starts.push(performance.now());
        return 'x'.repeat(64 * 1024);
      }),
    );
    const agent = await b.createAgent({ model: route });
    expect((await agent.run('paced please')).output).toBe('after: taken');
    expect(starts).toHaveLength(10);
    expect(starts[9]! - starts[0]!).toBeGreaterThanOrEqual(8 * 40 - 10);
  });
});

describe('a program’s end', () => {
  it.each([
    ['returns', "tools.hang({}); tools.hang({}); await tools.quick({}); return 'early';", false],
    ['hits its wall-clock limit', 'tools.hang({}); await tools.hang({});', true],
  ])(
    'a program that %s has its outstanding calls aborted through their signal before its turn ends',
    async (_case, code, limit) => {
      const b = start([program('leave', code)], { codeWallTimeoutMs: 1_000 });
      let started = 0;
      const aborted: unknown[] = [];
      b.tools.register(
        tool('hang', true, async (_args, ctx) => {
          started += 1;
          await new Promise<void>((resolve) => {
            const fallback = setTimeout(resolve, 15_000);
            ctx.signal.addEventListener('abort', () => {
              aborted.push(ctx.signal.reason);
              clearTimeout(fallback);
              resolve();
            });
          });
          return 'x'.repeat(1024); // dropped by the parent: the program is over
        }),
      );
      b.tools.register(tool('quick', true, () => 'quick'));
      const agent = await b.createAgent({ model: route });
      const turn = await agent.run('leave calls behind');

      expect(turn.stopReason).toBe('completed');
      expect(started).toBe(2);
      expect(aborted).toHaveLength(2);
      const [result] = await runCodeResults(b, agent.id);
      if (limit) expect(result).toMatchObject({ isError: true, errorCode: 'CODE_LIMIT' });
      else expect(result).toMatchObject({ isError: false, content: 'early' });
    },
  );

  it('a program cut short by its thread’s death runs again on the recovered driver: the call it waited on is aborted, then made again', async () => {
    const b = start(
      [program('victim', 'return await tools.gate({});'), { match: 'culprit', turns: [{ fault: 'throw' }] }],
      { pool: { threads: 1 } },
    );
    const calls: { callId: string; aborted: boolean }[] = [];
    let entered!: () => void;
    const waiting = new Promise<void>((resolve) => (entered = resolve));
    b.tools.register(
      tool('gate', true, async (_args, ctx) => {
        const call = { callId: ctx.callId, aborted: false };
        calls.push(call);
        if (calls.length > 1) return 'opened';
        entered();
        await new Promise<void>((resolve) => {
          const fallback = setTimeout(resolve, 15_000);
          ctx.signal.addEventListener('abort', () => {
            call.aborted = true;
            clearTimeout(fallback);
            resolve();
          });
        });
        return 'first';
      }),
    );
    const victim = await b.createAgent({ model: route });
    const culprit = await b.createAgent({ model: route });
    const pending = victim.run('victim');
    await waiting;
    expect((await culprit.run('culprit')).stopReason).toBe('error');

    expect(await pending).toMatchObject({ stopReason: 'completed', output: 'after: opened' });
    expect(calls).toEqual([
      { callId: 'call_0_0:code:1', aborted: true },
      { callId: 'call_0_0:code:1', aborted: false },
    ]);
    const results = await runCodeResults(b, victim.id);
    expect(results).toEqual([expect.objectContaining({ name: 'run_code', isError: false, content: 'opened' })]);
  });
});

describe('result size', () => {
  it('a result over codeResourceLimits.maxOutputBytes (UTF-8) is refused before it crosses; the program can catch it', async () => {
    const code = [
      'const out = [];',
      "for (const [kind, char, count] of [['text', 'y', 1000], ['text', 'y', 20000], ['json', 'y', 20000], ['text', 'é', 10000], ['text', 'é', 5000]]) {",
      '  try {',
      '    const value = await tools.sized({ kind, char, count });',
      "    out.push(kind + ' ' + char + 'x' + count + ' ok ' + (kind === 'json' ? value.data.length : value.length));",
      '  } catch (error) {',
      "    out.push(kind + ' ' + char + 'x' + count + ' refused: ' + error.message);",
      '  }',
      '}',
      "return out.join('\\n');",
    ].join('\n');
    const b = start([program('sizes', code)], { codeResourceLimits: { maxOutputBytes: 16 * 1024 } });
    b.tools.register(
      tool('sized', true, (args: { kind: string; char: string; count: number }) => {
        const text = args.char.repeat(args.count);
        return args.kind === 'json' ? { data: text } : text;
      }),
    );
    const agent = await b.createAgent({ model: route });
    const turn = await agent.run('sizes please');

    const refused = (bytes: number) =>
      `refused: the tool result (${bytes} bytes) exceeds codeResourceLimits.maxOutputBytes (16384 bytes)`;
    expect(turn.output.split('\n')).toEqual([
      'after: text yx1000 ok 1000',
      `text yx20000 ${refused(20_000)}`,
      `json yx20000 ${refused(20_011)}`,
      `text éx10000 ${refused(20_000)}`,
      'text éx5000 ok 5000',
    ]);
  });
});

describe('string results', () => {
  it('reach the program exactly as the tool returned them, NULs, lone surrogates and astral characters included', async () => {
    const strings = [
      'plain',
      'a\u0000b',
      'lone \ud800 high',
      'lone \udfff low',
      'pair 😀',
      'quote " and \\ and \n',
      '',
    ];
    const code = [
      'const out = [];',
      `for (let i = 0; i < ${strings.length}; i++) {`,
      '  const s = await tools.text({ i });',
      "  out.push(s.length + ':' + Array.from({ length: s.length }, (_, k) => s.charCodeAt(k)).join('.'));",
      '}',
      "return out.join(' ');",
    ].join('\n');
    const b = start([program('strings', code)]);
    b.tools.register(tool('text', true, (args: { i: number }) => strings[args.i]));
    const agent = await b.createAgent({ model: route });
    const turn = await agent.run('strings please');

    const codes = (s: string) => `${s.length}:${Array.from({ length: s.length }, (_, k) => s.charCodeAt(k)).join('.')}`;
    expect(turn.output).toBe(`after: ${strings.map(codes).join(' ')}`);
  });
});

describe('results keyed by program, released once delivered', () => {
  it('a model that reuses a run_code call id in a later step gets the new program’s results: the tool runs again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'brood-reused-id-'));
    try {
      const [first, second] = [join(dir, 'a.txt'), join(dir, 'b.txt')];
      await writeFile(first, 'contents of A');
      await writeFile(second, 'contents of B');
      brood = createBrood({
        codeMode: 'code',
        pool: { threads: 1 },
        models: [
          moduleAdapter({
            id: 'reuse',
            models: ['m'],
            moduleUrl: new URL('./fixtures/reused-call-id-adapter.mjs', import.meta.url),
            options: { first, second },
          }),
        ],
      });
      const reads: [string, string][] = [];
      brood.tools.register(
        tool('read_file', true, async (args: { path: string }, ctx) => {
          reads.push([args.path, ctx.callId]);
          return readFile(args.path, 'utf8');
        }),
      );
      const agent = await brood.createAgent({ model: { provider: 'reuse', model: 'm' } });
      const turn = await agent.run('read both files');

      expect(reads).toEqual([
        [first, 'c1:code:1'],
        [second, 'c1:code:1'],
      ]);
      expect(turn.output).toBe('contents of A | contents of B');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a large result the program discarded is not kept by the parent for the rest of the turn', async () => {
    const size = 24 * MB;
    const heap: number[] = [];
    const b = start(
      [
        {
          match: 'discard',
          turns: [
            {
              toolCalls: [
                { name: 'run_code', arguments: { description: 'd', code: 'return (await tools.blob({})).length;' } },
              ],
            },
            { toolCalls: [{ name: 'probe', arguments: {} }] },
            { text: 'after: {{results}}' },
          ],
        },
      ],
      { codeMode: 'both', codeResourceLimits: { maxOutputBytes: 32 * MB, memoryMb: 256 } },
    );
    b.tools.register(tool('blob', true, () => 'z'.repeat(size)));
    const measure = () => {
      forceGc();
      heap.push(v8.getHeapStatistics().used_heap_size);
      return 'measured';
    };
    b.tools.register(tool('probe', true, measure));
    const agent = await b.createAgent({ model: route });
    measure();
    const turn = await agent.run('discard it');

    expect(turn.output).toBe('after: measured');
    const [discarded] = await runCodeResults(b, agent.id);
    expect(discarded).toMatchObject({ name: 'run_code', isError: false, content: String(size) });
    expect(heap).toHaveLength(2);
    expect(heap[1]! - heap[0]!).toBeLessThan(size / 2);
  });
});
