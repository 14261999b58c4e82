/**
 * The program a run_code sandbox thread runs (a CommonJS script evaluated by `new Worker(..., { eval: true })`,
 * so no file has to be located at run time). Model-written code runs as the body of an async function
 * with only `tools` and `console` in scope; every tool call is a message to the driver's thread.
 */
export const SANDBOX_SOURCE = String.raw`
const { parentPort, workerData } = require('node:worker_threads');
const { format } = require('node:util');
let nextId = 0;
const pending = new Map();
parentPort.on('message', (message) => {
  const waiter = pending.get(message.id);
  if (!waiter) return;
  pending.delete(message.id);
  if (message.ok) waiter.resolve(message.value);
  else waiter.reject(new Error(message.message));
});
const call = (name, args) => new Promise((resolve, reject) => {
  const id = ++nextId;
  pending.set(id, { resolve, reject });
  parentPort.postMessage({ type: 'call', id, name, args: args === undefined ? {} : args });
});
const tools = new Proxy(Object.create(null), {
  get: (_target, name) => (typeof name === 'string' && name !== 'then' ? (args) => call(name, args) : undefined),
});
const log = (...args) => parentPort.postMessage({ type: 'log', line: format(...args) });
const sandboxConsole = Object.freeze({ log, info: log, warn: log, error: log, debug: log });
const AsyncFunction = (async () => {}).constructor;
Promise.resolve()
  .then(() => new AsyncFunction('tools', 'console', workerData.code)(tools, sandboxConsole))
  .then(
    (value) => parentPort.postMessage({ type: 'done', text: value === undefined ? undefined : typeof value === 'string' ? value : JSON.stringify(value) }),
    (error) => parentPort.postMessage({ type: 'error', message: error instanceof Error ? error.message : format(error) }),
  );
`;
