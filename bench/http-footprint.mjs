// Heap held per HTTP request in flight, Node's fetch against node:http over a keep-alive agent: N
// requests from one worker thread to a loopback server that answers after 3 s, the worker's heap read
// after a full collection before and while they wait. Why the HTTP adapters send with node:http
// (src/models/http-transport.ts). Not part of `npm run bench`.
//   node bench/http-footprint.mjs [N]
import { Agent, createServer, request } from 'node:http';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

const ANSWER_AFTER_MS = 3000;

if (isMainThread) await main();
else await measure(workerData);

async function main() {
  const n = Number(process.argv[2] ?? 1000);
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), ANSWER_AFTER_MS),
    );
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/v1/chat/completions`;
  for (const client of ['fetch', 'node:http', 'fetch', 'node:http']) {
    const worker = new Worker(new URL(import.meta.url), { workerData: { client, url, n } });
    const kb = await new Promise((resolve) => worker.once('message', resolve));
    console.log(`${client}: ${kb} KB of heap per request in flight (${n} requests)`);
    await new Promise((resolve) => worker.once('exit', resolve));
  }
  server.closeAllConnections();
  server.close();
}

async function measure({ client, url, n }) {
  const { setFlagsFromString } = await import('node:v8');
  setFlagsFromString('--expose-gc');
  const collect = (await import('node:vm')).runInNewContext('gc');
  const body = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hello' }] });
  const headers = { 'content-type': 'application/json', authorization: 'Bearer k' };
  const agent = new Agent({ keepAlive: true });
  const one = () => {
    const signal = new AbortController().signal; // each adapter request carries its turn's signal
    if (client === 'fetch') return fetch(url, { method: 'POST', headers, body, signal }).then((r) => r.text());
    return new Promise((resolve, reject) => {
      const req = request(url, { method: 'POST', agent, signal, headers }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
  };
  await Promise.all(Array.from({ length: 20 }, one)); // warm: modules loaded, code compiled
  collect();
  const before = process.memoryUsage().heapUsed;
  const inFlight = Array.from({ length: n }, one);
  await new Promise((resolve) => setTimeout(resolve, ANSWER_AFTER_MS / 2));
  collect();
  const during = process.memoryUsage().heapUsed;
  await Promise.all(inFlight);
  parentPort.postMessage(((during - before) / n / 1024).toFixed(1));
}
