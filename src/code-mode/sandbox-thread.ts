/**
 * A run_code sandbox thread: loads the QuickJS engine once (a warm engine for every later program),
 * then runs one program at a time on a fresh runtime + context, talking to the driver's thread over
 * its parent port. The engine's WebAssembly memory is created here with a maximum, which is what
 * actually bounds a program's memory: QuickJS's own limit does not count large strings and typed
 * arrays in this build, but a capped memory cannot grow past its maximum.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { QuickJSWASMModule } from 'quickjs-emscripten';
import { QuickJSProgram } from './quickjs-program.js';
import { engineMemoryPages, Realm } from './quickjs-realm.js';
import {
  type EngineSpec,
  type FromSandbox,
  parseToSandbox,
  RUNNING_SINCE,
  STOP_REQUESTED,
} from './sandbox-protocol.js';

// The DOM-less lib has no WebAssembly types; the engine's memory is all this file needs of it.
const WasmMemory = (
  globalThis as unknown as { WebAssembly: { Memory: new (limits: { initial: number; maximum: number }) => object } }
).WebAssembly.Memory;

interface SandboxData extends EngineSpec {
  control: SharedArrayBuffer;
}

export async function runSandboxThread(): Promise<void> {
  const port = parentPort;
  if (port === null) throw new Error('the run_code sandbox must run in a worker thread');
  const data = workerData as SandboxData;
  const runningSince = new BigInt64Array(data.control, 0, 1);
  const stopCell = new Int32Array(data.control);
  const engine = await loadEngine(data);
  const post = (message: FromSandbox): void => port.postMessage(message);
  let program: QuickJSProgram | undefined;
  // The next program's realm, made while the thread is idle (its set-up is most of a cold start).
  let spare: Realm | undefined;
  const prepare = (): void => {
    if (spare !== undefined || program !== undefined) return;
    try {
      spare = new Realm(engine, data);
    } catch {
      spare = undefined;
    }
  };

  port.on('message', (raw: unknown) => {
    const message = parseToSandbox(raw);
    if (message === undefined) return;
    if (message.type === 'run') {
      if (program !== undefined) return;
      Atomics.store(stopCell, STOP_REQUESTED, 0);
      let realm: Realm;
      try {
        realm = spare ?? new Realm(engine, data);
      } catch (error) {
        post({ type: 'end', ok: false, message: `run_code engine failed: ${String(error)}`, reusable: false });
        setImmediate(() => process.exit(0));
        return;
      }
      spare = undefined;
      program = new QuickJSProgram(engine, realm, data, message.limits, {
        log: (line) => post({ type: 'log', line }),
        calls: (calls, taken) => post({ type: 'calls', calls, taken }),
        end: (end) => {
          program = undefined;
          post(end);
          // A damaged engine is never reused: the driver retires this thread, and it exits on its own too.
          if (!end.reusable) setImmediate(() => process.exit(0));
          else setImmediate(prepare);
        },
        running: (since) => Atomics.store(runningSince, RUNNING_SINCE, BigInt(since)),
        stopRequested: () => Atomics.load(stopCell, STOP_REQUESTED) !== 0,
      });
      program.start(message.code);
    } else if (message.type === 'reply') {
      program?.reply(
        message.id,
        !message.ok
          ? { ok: false, message: message.message ?? 'the tool failed' }
          : message.text !== undefined
            ? { ok: true, text: message.text }
            : { ok: true, json: message.json ?? 'null' },
      );
    } else {
      program?.cancel();
    }
  });
  prepare();
  post({ type: 'ready' });
}

async function loadEngine(spec: EngineSpec): Promise<QuickJSWASMModule> {
  const { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC } = await import('quickjs-emscripten');
  const wasmMemory = new WasmMemory(engineMemoryPages(spec.memoryMb));
  return newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: wasmMemory as never }));
}
