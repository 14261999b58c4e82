/**
 * Adversarial Code Mode: model-written code gets tools and nothing else. Every escape below is a
 * real attempt at a host effect — write a marker file, spawn a process that writes another, open a
 * socket to a loopback server — and must fail inside the sandbox with no effect on the host.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, sandboxHarness } from './sandbox-harness.js';

let dir: string;
let fileMarker: string;
let spawnMarker: string;
let server: Server;
let port: number;
let connections = 0;
let harness: Harness;

/** What an escape does once it holds something host-like: every effect the test then looks for. */
function effects(host: string): string {
  return [
    `const h = ${host};`,
    `const mod = (name) => (h.getBuiltinModule ? h.getBuiltinModule(name) : h.mainModule ? h.mainModule.require(name) : h(name));`,
    `mod('fs').writeFileSync(${JSON.stringify(fileMarker)}, 'escaped');`,
    `mod('child_process').execSync('touch ' + ${JSON.stringify(spawnMarker)});`,
    `mod('net').connect(${port}, '127.0.0.1');`,
    `return 'escaped';`,
  ].join('\n');
}

const escapes: Record<string, () => string> = {
  process: () => effects('process'),
  require: () => effects('require'),
  'import(node:fs)': () =>
    `const fs = await import('node:fs'); fs.writeFileSync(${JSON.stringify(fileMarker)}, 'escaped'); return 'escaped';`,
  'globalThis.constructor.constructor': () => effects("globalThis.constructor.constructor('return process')()"),
  'tools.constructor.constructor': () => effects("tools.constructor.constructor('return process')()"),
  'async constructor this': () => effects("(await (async () => {}).constructor('return this')()).process"),
  "Function('return this')().process": () => effects("Function('return this')().process"),
  'console.log.constructor': () => effects("console.log.constructor('return process')()"),
  fetch: () => `await fetch('http://127.0.0.1:${port}/'); return 'escaped';`,
  'WebAssembly host imports': () =>
    [
      // A module importing a host function: any import object would need a host realm to call into.
      'const bytes = new Uint8Array([0,97,115,109,1,0,0,0,1,4,1,96,0,0,2,9,1,3,101,110,118,1,102,0,0]);',
      'const { instance } = await WebAssembly.instantiate(bytes, { env: { f: () => process } });',
      'return "escaped";',
    ].join('\n'),
  'Atomics.wait on shared memory': () =>
    'const cell = new Int32Array(new SharedArrayBuffer(16)); Atomics.wait(cell, 0, 0, 10_000); return "escaped";',
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'brood-escape-'));
  fileMarker = join(dir, 'file-marker');
  spawnMarker = join(dir, 'spawn-marker');
  server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  const programs = Object.fromEntries(Object.entries(escapes).map(([name, code]) => [name, code()]));
  programs['toJSON and getters on tool arguments'] = [
    'const seen = [];',
    'const args = {',
    '  n: 1,',
    "  get trap() { seen.push('getter'); return typeof process; },",
    "  toJSON() { seen.push('toJSON'); return { n: 2, proto: Object.getPrototypeOf(this) === Object.prototype, fn: () => 1, host: typeof require }; },",
    '};',
    'const result = await tools.echo(args);',
    'console.log(seen.join(","), JSON.stringify(result));',
    // A getter that throws while the arguments are serialized rejects the call inside the sandbox.
    "try { await tools.echo({ get boom() { throw new Error('getter ran in the sandbox'); } }); } catch (e) { console.log('caught', e.message); }",
    "try { await tools.echo({ big: 10n }); } catch (e) { console.log('caught', e.name); }",
  ].join('\n');
  programs['prototype pollution'] = [
    'const result = await tools.lookup({ n: 21 });',
    "result.tags.push('evil'); result.nested.ok = 'evil';",
    "Object.prototype.polluted = 'yes'; Array.prototype.evil = 1; result.__proto__.viaResult = 1;",
    "globalThis.leftBehind = 'x';",
    'JSON.parse = () => ({ forged: true });',
    "const value = JSON.parse('{}');",
    'return { __proto__: { inherited: true }, ["__proto__"]: { own: true }, value, polluted: ({}).polluted };',
  ].join('\n');
  programs['after pollution'] =
    "return [typeof globalThis.leftBehind, ({}).polluted, [].evil, JSON.parse('{\"ok\":1}').ok].map(String).join(' ');";
  harness = sandboxHarness(programs);
});

afterAll(async () => {
  await harness?.brood.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

function expectNoHostEffect(): void {
  expect(existsSync(fileMarker), 'a file was written by sandboxed code').toBe(false);
  expect(existsSync(spawnMarker), 'a process was spawned by sandboxed code').toBe(false);
  expect(connections, 'a socket reached the loopback server').toBe(0);
}

describe('escapes from run_code fail inside the sandbox and leave the host untouched', () => {
  for (const name of Object.keys(escapes)) {
    it(name, async () => {
      const result = await harness.run(name);
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(
        /^Error: .*(not defined|not a function|could not load module|modules are not available|cannot read|undefined|null)/i,
      );
      expect(result.content).not.toContain('escaped');
      expectNoHostEffect();
      // The agent and the runtime are fine afterwards.
      expect(result.agent.status).not.toBe('disposed');
    });
  }

  it('the global scope holds ECMAScript built-ins only', async () => {
    const probe = sandboxHarness({
      globals: [
        'const lower = Object.getOwnPropertyNames(globalThis).filter((k) => !/^[A-Z]/.test(k)).sort();',
        'return JSON.stringify([lower, typeof console, typeof tools, typeof setTimeout, typeof queueMicrotask, typeof WebAssembly, typeof Atomics, typeof process]);',
      ].join('\n'),
    });
    try {
      const result = await probe.run('globals');
      expect(result.isError).toBe(false);
      const [names, ...types] = JSON.parse(result.content) as [string[], ...string[]];
      expect(types).toEqual(['object', 'object', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined']);
      const standard = [
        'decodeURI',
        'decodeURIComponent',
        'encodeURI',
        'encodeURIComponent',
        'escape',
        'eval',
        'globalThis',
        'isFinite',
        'isNaN',
        'parseFloat',
        'parseInt',
        'undefined',
        'unescape',
      ];
      expect(names).toEqual(standard);
    } finally {
      await probe.brood.close();
    }
  });

  it('toJSON and getters run inside the sandbox; the host receives plain JSON data only', async () => {
    const before = harness.received.length;
    const result = await harness.run('toJSON and getters on tool arguments');
    expect(result.isError).toBe(false);
    const lines = result.content.split('\n');
    expect(lines[0]).toBe('toJSON {"n":2,"proto":true,"host":"undefined"}');
    expect(lines.slice(1)).toEqual(['caught getter ran in the sandbox', 'caught TypeError']);
    const got = harness.received.slice(before);
    expect(got).toHaveLength(1);
    expect(got[0]!.args).toEqual({ n: 2, proto: true, host: 'undefined' });
    expect(Object.getPrototypeOf(got[0]!.args)).toBe(Object.prototype);
    expectNoHostEffect();
  });

  it('prototype pollution stays in the program: the host objects, the next program and the host realm are clean', async () => {
    const result = await harness.run('prototype pollution');
    expect(result.isError).toBe(false);
    // The return value crosses as JSON text; an own "__proto__" key stays data.
    expect(JSON.parse(result.content)).toEqual(
      JSON.parse('{"__proto__":{"own":true},"value":{"forged":true},"polluted":"yes"}'),
    );
    expect(harness.lastLookupResult()).toEqual({ n: 42, tags: ['a', 'b'], nested: { ok: true } });
    const probe: Record<string, unknown> = {};
    expect(probe.polluted).toBeUndefined();
    expect(probe.viaResult).toBeUndefined();
    expect(([] as unknown as Record<string, unknown>).evil).toBeUndefined();
    // A later program on the same (warm) sandbox thread gets a fresh realm.
    const after = await harness.run('after pollution');
    expect(after).toMatchObject({ isError: false, content: 'undefined undefined undefined 1' });
    expectNoHostEffect();
  });
});
