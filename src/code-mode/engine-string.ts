/**
 * A host string copied into the engine, with the allocation checked. quickjs-emscripten 0.32's
 * `QuickJSContext.newString` copies the string into a C buffer from `_malloc` without looking at the
 * pointer: when the engine's WebAssembly memory is at its maximum (engineMemoryPages) `_malloc`
 * returns 0, the copy lands at address 0 of the engine's memory, and the program goes on with an
 * empty string over corrupted engine memory. Every host string that enters the engine goes through
 * here instead; a failed allocation is the memory limit, before anything is written.
 *
 * This reads three fields the library does not declare public (`memory.module`, `ffi`, `ctx`); the
 * package is pinned, and a changed shape fails loudly here rather than silently.
 */
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten';

interface EngineHeap {
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  lengthBytesUTF8(text: string): number;
  stringToUTF8(text: string, pointer: number, maxBytes: number): void;
}

interface ContextInternals {
  memory: { module: EngineHeap; heapValueHandle(pointer: number): QuickJSHandle };
  ffi: { QTS_NewString(context: number, pointer: number): number };
  ctx: { value: number };
}

/** Thrown when the engine cannot hold the string; its message names memory, so the program ends at the memory limit. */
export class EngineOutOfMemory extends Error {
  constructor(bytes: number) {
    super(`the engine is out of memory: no room for a ${bytes}-byte string`);
    this.name = 'EngineOutOfMemory';
  }
}

function internalsOf(vm: QuickJSContext): ContextInternals {
  const internals = vm as unknown as Partial<ContextInternals>;
  if (typeof internals.memory?.module?._malloc !== 'function' || typeof internals.ffi?.QTS_NewString !== 'function') {
    throw new Error('quickjs-emscripten changed shape: engine-string.ts needs updating');
  }
  return internals as ContextInternals;
}

export function newEngineString(vm: QuickJSContext, text: string): QuickJSHandle {
  const { memory, ffi, ctx } = internalsOf(vm);
  const heap = memory.module;
  const bytes = heap.lengthBytesUTF8(text) + 1;
  const pointer = heap._malloc(bytes);
  if (pointer === 0) throw new EngineOutOfMemory(bytes);
  try {
    heap.stringToUTF8(text, pointer, bytes);
    return memory.heapValueHandle(ffi.QTS_NewString(ctx.value, pointer));
  } finally {
    heap._free(pointer);
  }
}
