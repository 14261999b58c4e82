/**
 * Code Mode limits: each engine limit ends the program with an errored run_code result that names
 * the limit (errorCode CODE_LIMIT) and keeps the logs so far, while a sibling agent on the same pool
 * thread finishes its own program normally and the runtime keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrood } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { type Harness, sandboxHarness } from './sandbox-harness.js';

const SIBLING =
  "let sum = 0; for (let i = 1; i <= 3; i++) sum += (await tools.lookup({ n: i })).n; console.log('sibling', sum); return 'sibling ok';";

const limits: Record<string, { code: string; names: RegExp; logs?: string }> = {
  'memory bomb (large strings)': {
    code: "console.log('allocating'); const keep = []; while (true) keep.push('x'.repeat(1 << 20) + keep.length);",
    names: /memory limit of 64 MB \(codeResourceLimits\.memoryMb\)/,
    logs: 'allocating',
  },
  'memory bomb (small objects)': {
    // Awaiting a tool now and then keeps the busy limit out of it: only memory can end this one.
    code: "console.log('allocating'); const keep = []; for (;;) { for (let i = 0; i < 5000; i++) keep.push({ i, items: new Array(64).fill(i) }); await tools.lookup({ n: 1 }); }",
    names: /memory limit of 64 MB/,
    logs: 'allocating',
  },
  'busy loop': {
    code: "console.log('spinning'); while (true) {}",
    names: /ran 1000 ms without awaiting a tool call \(codeBusyTimeoutMs\)/,
    logs: 'spinning',
  },
  'deep recursion': {
    code: "console.log('recursing'); const down = (n) => down(n + 1) + 1; down(0);",
    names: /stack limit of 1024 KB \(codeResourceLimits\.stackKb\)/,
    logs: 'recursing',
  },
  'deep recursion in a native (JSON.parse)': {
    code: "return JSON.parse('['.repeat(200000));",
    names: /stack limit of 1024 KB/,
  },
  '100 MB string return': {
    code: "console.log('building'); return 'x'.repeat(100 * 1024 * 1024);",
    names: /memory limit of 64 MB/,
    logs: 'building',
  },
  '10,000 tool calls': {
    code: "console.log('calling'); for (let i = 0; i < 10000; i++) await tools.lookup({ n: i }); return 'all done';",
    names: /more than 1000 tool calls \(codeResourceLimits\.maxToolCalls\)/,
    logs: 'calling',
  },
  'output flood': {
    code: "for (let i = 0; ; i++) console.log('line', i, 'x'.repeat(1000));",
    names: /output exceeded 1048576 bytes \(codeResourceLimits\.maxOutputBytes\)/,
    logs: 'line 0 ',
  },
  // JSON.stringify of a deeply nested value never polls the interrupt handler: the driver's backstop ends the thread.
  'engine stuck outside the interrupt handler': {
    code: "let o = []; for (let i = 0; i < 100000; i++) o = [o]; console.log('built'); return o;",
    names: /ran 1000 ms without awaiting a tool call/,
    logs: 'built',
  },
};

let harness: Harness;

beforeAll(() => {
  harness = sandboxHarness({
    ...Object.fromEntries(Object.entries(limits).map(([name, { code }]) => [name, code])),
    sibling: SIBLING,
    after: 'return 6 * 7;',
  });
});

afterAll(async () => {
  await harness?.brood.close();
});

describe('run_code engine limits', () => {
  for (const [name, { names, logs }] of Object.entries(limits)) {
    it(`${name}: an errored result naming the limit; a sibling on the same thread and the runtime are fine`, async () => {
      const [limited, sibling] = await Promise.all([harness.run(name), harness.run('sibling')]);
      expect(limited.isError).toBe(true);
      expect(limited.errorCode).toBe('CODE_LIMIT');
      expect(limited.content).toMatch(new RegExp(`^Error: run_code .*${names.source}`));
      if (logs !== undefined) expect(limited.content.split('\n')[1]).toContain(logs);
      expect(sibling).toMatchObject({ isError: false, content: 'sibling 12\nsibling ok' });
      // The limited agent's runtime goes on: a new program runs (on a warm or a fresh sandbox thread).
      expect(await harness.run('after')).toMatchObject({ isError: false, content: '42' });
    });
  }

  it('10,000 tool calls: exactly maxToolCalls of them reached the host', async () => {
    const before = harness.received.length;
    await harness.run('10,000 tool calls');
    expect(harness.received.length - before).toBe(1000);
  });

  it('a busy program does not stall a sibling driver on the same pool thread', async () => {
    const slow = sandboxHarness({ spin: 'while (true) {}', sibling: SIBLING }, { codeBusyTimeoutMs: 4_000 });
    try {
      const order: string[] = [];
      const spinning = slow.run('spin').then((r) => {
        order.push('spin');
        return r;
      });
      const sibling = slow.run('sibling').then((r) => {
        order.push('sibling');
        return r;
      });
      const [spin, done] = await Promise.all([spinning, sibling]);
      expect(done).toMatchObject({ isError: false, content: 'sibling 12\nsibling ok' });
      expect(spin.errorCode).toBe('CODE_LIMIT');
      expect(order).toEqual(['sibling', 'spin']);
    } finally {
      await slow.brood.close();
    }
  });
});

describe('codeResourceLimits', () => {
  it('smaller limits apply: memoryMb, stackKb, maxOutputBytes, maxToolCalls', async () => {
    const tight = sandboxHarness(
      {
        memory: "const keep = []; while (true) keep.push('y'.repeat(1 << 20) + keep.length);",
        stack: 'const down = (n) => down(n + 1) + 1; down(0);',
        output: "console.log('z'.repeat(3000));",
        calls: 'for (let i = 0; i < 3; i++) await tools.lookup({ n: i });',
        fits: "console.log('small'); const depth = (n) => (n === 0 ? 0 : depth(n - 1) + 1); return depth(100) + (await tools.lookup({ n: 1 })).n;",
      },
      { codeResourceLimits: { memoryMb: 16, stackKb: 128, maxOutputBytes: 2048, maxToolCalls: 2 } },
    );
    try {
      expect((await tight.run('memory')).content).toMatch(/^Error: .*memory limit of 16 MB/);
      expect((await tight.run('stack')).content).toMatch(/^Error: .*stack limit of 128 KB/);
      expect((await tight.run('output')).content).toMatch(/^Error: .*output exceeded 2048 bytes/);
      expect((await tight.run('calls')).content).toMatch(/^Error: .*more than 2 tool calls/);
      expect(await tight.run('fits')).toMatchObject({ isError: false, content: 'small\n102' });
    } finally {
      await tight.brood.close();
    }
  });

  it('out-of-range or unknown limits → INVALID_CONFIG', () => {
    for (const bad of [
      { memoryMb: 4 },
      { memoryMb: 4096 },
      { stackKb: 8192 },
      { stackKb: 1.5 },
      { maxOutputBytes: 10 },
      { maxToolCalls: 0 },
      { cpuMs: 5 },
    ]) {
      expectCode(() => createBrood({ codeResourceLimits: bad as never }), 'INVALID_CONFIG');
    }
  });
});
