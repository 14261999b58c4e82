/**
 * The worker side of the watch board (SPEC §10.5): at every entry into a driver's code the thread
 * records that driver's activation token, so whatever runs when the thread dies — a synchronous spin,
 * process.exit, heap exhaustion, an uncaught throw — is attributed to its driver.
 *
 * A driver's code runs in three kinds of entry, each recorded here:
 * - its activation's start (runWatched);
 * - promise reactions (every `await` and `then` after the start): V8's promise hooks tag each promise
 *   made while an activation is current with its token, and a reaction whose promise is tagged
 *   records that token while it runs;
 * - callbacks it hands to the timers and task queues (setTimeout, setInterval, setImmediate,
 *   queueMicrotask, process.nextTick), which this thread's globals wrap while an activation is current.
 * A callback Node itself schedules from a socket or a port (an adapter's `data` listener, say) is not
 * recorded: a death there finds no driver on the board and goes through the suspects (thread-deaths.ts).
 *
 * Why not async_hooks with an AsyncLocalStorage, which also follows sockets: on every promise Node's
 * hooks set three properties (two async ids, the store) and run its context stack, and a pool thread
 * makes thousands of promises per second per thousand drivers. Measured: 538 → 138 ns per callback
 * (bench/watch-hook.mjs), and ~10 % less pool CPU per child in a 10,000-child fan-out.
 */
import { promisify } from 'node:util';
import { promiseHooks } from 'node:v8';
import { threadId } from 'node:worker_threads';
import { WatchBoard } from '../wire/watch-board.js';

const HEARTBEAT_MS = 50;
/** A promise's activation, set when it was made while one was current. */
const TOKEN = Symbol('brood.activation');
type Tagged = { [TOKEN]?: number };

let board: WatchBoard | undefined;
/** The activation whose code is running now (0: none, brood's own code). */
let current = 0;
/**
 * A scheduled callback threw: the board keeps its driver until the thread dies. An uncaught throw from
 * a queued microtask does not stop the thread at once, and the microtasks queued behind it (other
 * drivers' reactions) would otherwise write themselves over the culprit first.
 */
let held = false;
const setImmediateUnwrapped = setImmediate;

/** Installed once per thread, on the first activation (the board arrives with the plan). */
function install(buffer: SharedArrayBuffer): void {
  const watch = new WatchBoard(buffer);
  watch.reset(threadId);
  board = watch;
  promiseHooks.createHook({ init: tagPromise, before: enterReaction, after: leave });
  wrapScheduling();
  setInterval(() => watch.beat(threadId), HEARTBEAT_MS).unref();
}

export function runWatched<T>(buffer: SharedArrayBuffer, token: number, work: () => Promise<T>): Promise<T> {
  if (board === undefined) install(buffer);
  const outer = current;
  enter(token);
  // Only work()'s synchronous part runs under the token here; the board is restored even if it throws.
  // The rest runs in reactions and scheduled callbacks, each leaving the board at 0 when it returns,
  // so the activation's end needs no reaction of its own to say the thread is idle.
  try {
    return work();
  } finally {
    enter(outer);
  }
}

function enter(token: number): void {
  current = token;
  if (!held) board?.setRunning(threadId, token);
}

/** After an entry returned: nothing of a driver's runs until the next one records it. */
function leave(): void {
  if (current === 0) return;
  current = 0;
  if (!held) board?.setRunning(threadId, 0);
}

/** Keeps the board as it is; a thread that survives (an adapter's uncaughtException listener) lets go. */
function holdBoard(): void {
  held = true;
  setImmediateUnwrapped(() => {
    held = false;
  });
}

function tagPromise(promise: Promise<unknown>): void {
  if (current !== 0) (promise as Tagged)[TOKEN] = current;
}

function enterReaction(promise: Promise<unknown>): void {
  const token = (promise as Tagged)[TOKEN];
  if (token !== undefined) enter(token);
}

type Callback = (...args: unknown[]) => unknown;

/**
 * The callback as a recorded entry of the activation current now. A throw holds its token on the
 * board: the uncaught exception that follows kills the thread, and the board names who.
 */
function attributed(callback: unknown): unknown {
  if (current === 0 || typeof callback !== 'function') return callback;
  const token = current;
  return function recorded(this: unknown, ...args: unknown[]) {
    enter(token);
    let result: unknown;
    try {
      result = (callback as Callback).apply(this, args);
    } catch (error) {
      holdBoard();
      throw error;
    }
    leave();
    return result;
  };
}

/** Wraps the scheduling globals a driver or its adapter calls; each keeps what promisify reads. */
function wrapScheduling(): void {
  const scope = globalThis as unknown as Record<string, Callback>;
  for (const name of ['setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask'] as const) {
    scope[name] = wrapFirstArgument(scope[name] as Callback);
  }
  process.nextTick = wrapFirstArgument(process.nextTick as Callback) as typeof process.nextTick;
}

function wrapFirstArgument(schedule: Callback): Callback {
  const wrapped = function (this: unknown, callback: unknown, ...rest: unknown[]) {
    return schedule.call(this, attributed(callback), ...rest);
  };
  const custom = (schedule as unknown as Record<symbol, unknown>)[promisify.custom];
  if (custom !== undefined) Object.defineProperty(wrapped, promisify.custom, { value: custom });
  return wrapped;
}
