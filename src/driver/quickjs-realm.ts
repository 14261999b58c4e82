/**
 * A fresh QuickJS runtime + context with the prelude already evaluated (sandbox-prelude.ts). The
 * sandbox thread makes the next one while it is idle, so a program's start costs only its own
 * compilation: evaluating the prelude is most of a realm's set-up. The four host callbacks forward
 * to whichever program is bound to the realm; a realm serves exactly one program.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten';
import { SANDBOX_PRELUDE } from './sandbox-prelude.js';
import type { EngineSpec } from './sandbox-protocol.js';

export const WASM_PAGE = 65_536;
/** The engine image, its 5 MiB stack and allocator overhead share the WebAssembly memory with the heap. */
const ENGINE_BASE_MB = 16;

/** Pages of the engine's WebAssembly memory: initially the engine's own, at most a margin above the heap limit. */
export function engineMemoryPages(memoryMb: number): { initial: number; maximum: number } {
  return {
    initial: (ENGINE_BASE_MB << 20) / WASM_PAGE,
    maximum: ((ENGINE_BASE_MB + Math.ceil(memoryMb * 1.5)) << 20) / WASM_PAGE,
  };
}

/** What a realm's host callbacks and interrupt handler call into: the program bound to it. */
export interface RealmHost {
  onCall(name: QuickJSHandle, args: QuickJSHandle): QuickJSHandle;
  onLog(encoded: QuickJSHandle): void;
  onDone(text: QuickJSHandle): void;
  onFail(kind: QuickJSHandle, payload: QuickJSHandle, name: QuickJSHandle): void;
  shouldInterrupt(): boolean;
}

export class Realm {
  readonly runtime: QuickJSRuntime;
  readonly vm: QuickJSContext;
  /** The prelude's `run(code)` and `settle(id, ok, payload, text)`. */
  readonly run: QuickJSHandle;
  readonly settle: QuickJSHandle;
  private host: RealmHost | undefined;

  constructor(engine: QuickJSWASMModule, spec: EngineSpec) {
    this.runtime = engine.newRuntime();
    this.runtime.setMemoryLimit(spec.memoryMb * 1024 * 1024);
    this.runtime.setMaxStackSize(spec.stackKb * 1024);
    this.runtime.setInterruptHandler(() => this.host?.shouldInterrupt() ?? false);
    this.runtime.setModuleLoader(() => ({ error: new Error('modules are not available inside run_code') }));
    this.vm = this.runtime.newContext();
    const callbacks = [
      this.vm.newFunction('hostCall', (name, args) => this.bound().onCall(name, args)),
      this.vm.newFunction('hostLog', (line) => this.bound().onLog(line)),
      this.vm.newFunction('hostDone', (text) => this.bound().onDone(text)),
      this.vm.newFunction('hostFail', (kind, payload, name) => this.bound().onFail(kind, payload, name)),
    ];
    const prelude = this.unwrap(this.vm.evalCode(SANDBOX_PRELUDE, 'prelude.js'));
    const pair = this.unwrap(this.vm.callFunction(prelude, this.vm.undefined, ...callbacks));
    for (const handle of [prelude, ...callbacks]) handle.dispose();
    this.run = this.vm.getProp(pair, 0);
    this.settle = this.vm.getProp(pair, 1);
    pair.dispose();
  }

  bind(host: RealmHost): void {
    this.host = host;
  }

  /** Frees the runtime; false when the engine objects to it (then the thread is retired). */
  dispose(): boolean {
    try {
      this.run.dispose();
      this.settle.dispose();
      this.vm.dispose();
      this.runtime.dispose();
      return true;
    } catch {
      return false;
    }
  }

  private bound(): RealmHost {
    if (this.host === undefined) throw new Error('no run_code program is bound to this realm');
    return this.host;
  }

  private unwrap(result: { value: QuickJSHandle } | { error: QuickJSHandle }): QuickJSHandle {
    if ('error' in result && result.error) {
      const detail = this.vm.dump(result.error);
      result.error.dispose();
      throw new Error(`run_code prelude failed: ${JSON.stringify(detail)}`);
    }
    return (result as { value: QuickJSHandle }).value;
  }
}
