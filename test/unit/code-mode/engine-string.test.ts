/**
 * A tool result that reaches an engine whose WebAssembly memory is at its maximum. The library's own
 * `newString` does not check its allocation and writes the string at address 0 of the engine's
 * memory; brood's copy refuses instead, and the program ends at its memory limit. The real QuickJS
 * engine, in this process (a sandbox thread only hosts the same objects).
 */
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSWASMModule, RELEASE_SYNC } from 'quickjs-emscripten';
import { describe, expect, it } from 'vitest';
import { EngineOutOfMemory, newEngineString } from '../../../src/code-mode/engine-string.js';
import { QuickJSProgram } from '../../../src/code-mode/quickjs-program.js';
import { engineMemoryPages, Realm } from '../../../src/code-mode/quickjs-realm.js';
import type { ProgramEnd, ToolCallOut } from '../../../src/code-mode/sandbox-protocol.js';

const SPEC = { memoryMb: 8, stackKb: 1024 };

/** The DOM-less lib has no WebAssembly types: the engine's memory as this test reads it. */
interface EngineMemory {
  readonly buffer: ArrayBuffer;
}
const WasmMemory = (
  globalThis as unknown as {
    WebAssembly: { Memory: new (limits: { initial: number; maximum: number }) => EngineMemory };
  }
).WebAssembly.Memory;

async function engine(): Promise<{ module: QuickJSWASMModule; memory: EngineMemory }> {
  const memory = new WasmMemory(engineMemoryPages(SPEC.memoryMb));
  const module = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: memory as never }));
  return { module, memory };
}

/** Takes every byte the engine's allocator can still hand out (what a program near its cap leaves). */
function exhaust(realm: Realm, sizes = [1 << 20, 1 << 14, 1 << 8, 16]): () => void {
  const heap = (realm.vm as unknown as { memory: { module: { _malloc(n: number): number; _free(p: number): void } } })
    .memory.module;
  const taken: number[] = [];
  for (const size of sizes) {
    for (let pointer = heap._malloc(size); pointer !== 0; pointer = heap._malloc(size)) taken.push(pointer);
  }
  return () => {
    for (const pointer of taken) heap._free(pointer);
  };
}

const addressZero = (memory: EngineMemory) => Buffer.from(new Uint8Array(memory.buffer, 0, 32)).toString('hex');

describe('a host string entering an engine with no memory left', () => {
  it("the library's newString writes it at address 0 (why brood does not use it)", async () => {
    const { module, memory } = await engine();
    const realm = new Realm(module, SPEC);
    const release = exhaust(realm);
    const before = addressZero(memory);
    realm.vm.newString('a tool result the engine has no room for').dispose();
    expect(addressZero(memory)).not.toBe(before);
    release();
  });

  it('newEngineString refuses it and writes nothing', async () => {
    const { module, memory } = await engine();
    const realm = new Realm(module, SPEC);
    const release = exhaust(realm);
    const before = addressZero(memory);
    expect(() => newEngineString(realm.vm, 'a tool result the engine has no room for')).toThrow(EngineOutOfMemory);
    expect(addressZero(memory)).toBe(before);
    release();
    const handle = newEngineString(realm.vm, 'room again: ü, 🙂');
    expect(realm.vm.getString(handle)).toBe('room again: ü, 🙂');
    handle.dispose();
    realm.dispose();
  });

  it('a result with no room left ends the program at its memory limit without writing into the engine, which is not reused', async () => {
    const { module, memory } = await engine();
    const realm = new Realm(module, SPEC);
    const ends: ProgramEnd[] = [];
    const calls: ToolCallOut[] = [];
    const program = new QuickJSProgram(
      module,
      realm,
      SPEC,
      { busyMs: 5_000, wallMs: 5_000, maxOutputBytes: 1 << 20, maxToolCalls: 10 },
      {
        log: () => undefined,
        calls: (made) => calls.push(...made),
        end: (end) => ends.push(end),
        running: () => undefined,
        stopRequested: () => false,
      },
    );
    program.start('const answer = await tools.big({}); return "got " + answer.length;');
    expect(ends).toEqual([]);
    expect(calls.map((call) => call.name)).toEqual(['big']);
    // Room for the engine's own small allocations, none for a 256 KB copy of the result.
    exhaust(realm, [1 << 20, 1 << 17]);
    const before = addressZero(memory);
    program.reply(calls[0]?.id ?? -1, { ok: true, text: 'x'.repeat(256 * 1024) });
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ ok: false, limit: 'memory', reusable: false });
    expect(addressZero(memory)).toBe(before);
  });
});
