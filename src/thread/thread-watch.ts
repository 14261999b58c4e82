/**
 * The worker side of the watch board. Each activation runs inside an AsyncLocalStorage context holding
 * its token; an async hook records that token on every entry into a callback of that context (model
 * I/O continuations, timers, immediates included), so whatever runs when the thread dies — a
 * synchronous spin, process.exit, heap exhaustion, an uncaught throw — is attributed to its driver.
 */
import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import { threadId } from 'node:worker_threads';
import { WatchBoard } from '../wire/watch-board.js';

const HEARTBEAT_MS = 50;
const activationToken = new AsyncLocalStorage<number>();
let board: WatchBoard | undefined;

/** Installed once per thread, on the first activation (the board arrives with the plan). */
function install(buffer: SharedArrayBuffer): WatchBoard {
  const watch = new WatchBoard(buffer);
  watch.reset(threadId);
  createHook({
    before() {
      const token = activationToken.getStore();
      if (token !== undefined) watch.setRunning(threadId, token);
    },
    after() {
      if (activationToken.getStore() !== undefined) watch.setRunning(threadId, 0);
    },
  }).enable();
  setInterval(() => watch.beat(threadId), HEARTBEAT_MS).unref();
  return watch;
}

export function runWatched<T>(buffer: SharedArrayBuffer, token: number, work: () => Promise<T>): Promise<T> {
  board ??= install(buffer);
  const watch = board;
  return activationToken.run(token, () => {
    watch.setRunning(threadId, token);
    return work().then(idleWith, idleThrowing);
  });
}

// Module functions, not closures: an activation's end costs no allocation to say the thread is idle.
function idleWith<T>(value: T): T {
  board?.setRunning(threadId, 0);
  return value;
}

function idleThrowing(error: unknown): never {
  board?.setRunning(threadId, 0);
  throw error;
}
