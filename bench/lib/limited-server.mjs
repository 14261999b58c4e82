// The governed bench's provider: a Chat Completions server with a fixed latency that enforces its own
// limits — `concurrent` requests at once and `perSecond` requests a second with no burst — answering
// 429 + retry-after-ms beyond them, as a provider does.
//
// It runs on its own thread, as a provider runs on its own machine: its clock reads a request when
// the request arrives, not when the client's busy event loop (256 agents' parent) gets round to it,
// which on one shared loop turned requests sent 10 ms apart into requests read 0 ms apart. With
// `realtime`, that thread also asks for real-time scheduling (`chrt -f`; needs the privilege, else it
// stays at normal priority and says so): on two cores shared with the client's three busy threads,
// a normal-priority server thread read requests written 10+ ms apart 0–5 ms apart when it was not
// scheduled in time (write→read p99 85 ms under load, 4 ms at real-time priority), and refused them.
//
// The rate rule is GCRA (a virtual scheduling clock): request k+1 is accepted no earlier than
// `spacing` after request k's accepted slot, with `toleranceMs` of arrival jitter (half a spacing:
// never a second request inside one spacing, so no burst).
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

/** Starts the server thread: `{ baseURL, priority, counts(), close() }`. */
export async function limitedServer(config) {
  const worker = new Worker(new URL(import.meta.url), { workerData: config });
  const { port, priority } = await nextMessage(worker);
  const ask = async (what) => {
    worker.postMessage(what);
    return nextMessage(worker);
  };
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    priority,
    counts: () => ask('counts'),
    close: async () => {
      await ask('close');
      await worker.terminate();
    },
  };
}

function nextMessage(worker) {
  return new Promise((resolve, reject) => {
    const onError = (error) => reject(error);
    worker.once('error', onError);
    worker.once('message', (message) => {
      worker.off('error', onError);
      resolve(message);
    });
  });
}

/** Real-time (FIFO) scheduling for this thread, where permitted: 'realtime', or 'normal' when not. */
function schedulePromptly() {
  try {
    const threadId = readlinkSync('/proc/thread-self').split('/').pop();
    execFileSync('chrt', ['-f', '-p', '50', threadId], { stdio: 'ignore' });
    return 'realtime';
  } catch {
    return 'normal';
  }
}

function serve({ concurrent, perSecond, latencyMs, realtime = false }) {
  const spacing = 1000 / perSecond;
  const toleranceMs = spacing / 2;
  const counts = { throttled: 0, early: 0, inFlight: 0, maxInFlight: 0, requests: 0, gaps: [] };
  let nextAllowed = 0;
  let lastArrival;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      const now = performance.now();
      const early = now < nextAllowed - toleranceMs;
      if (early || counts.inFlight >= concurrent) {
        counts.throttled += 1;
        if (early) counts.early += 1;
        const wait = early ? Math.ceil(nextAllowed - now) : latencyMs;
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': String(wait) });
        res.end('{"error":{"message":"rate limited"}}');
        return;
      }
      nextAllowed = Math.max(nextAllowed, now) + spacing;
      if (lastArrival !== undefined) counts.gaps.push(now - lastArrival);
      lastArrival = now;
      counts.firstAt ??= performance.timeOrigin + now; // epoch ms, comparable across threads
      counts.requests += 1;
      counts.inFlight += 1;
      counts.maxInFlight = Math.max(counts.maxInFlight, counts.inFlight);
      const answered = JSON.parse(raw).messages.some((m) => m.role === 'tool');
      setTimeout(() => {
        counts.inFlight -= 1;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(completion(answered)));
      }, latencyMs);
    });
  });
  const priority = realtime ? schedulePromptly() : 'normal';
  server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port, priority }));
  parentPort.on('message', (what) => {
    if (what === 'counts') parentPort.postMessage(counts);
    if (what === 'close') {
      server.closeAllConnections();
      server.close(() => parentPort.postMessage('closed'));
    }
  });
}

/** A tool call first (the child then answers it), then a final answer. */
function completion(answered) {
  const message = answered
    ? { role: 'assistant', content: 'done' }
    : {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'note', arguments: '{}' } }],
      };
  return {
    id: 'x',
    object: 'chat.completion',
    choices: [{ index: 0, message, finish_reason: answered ? 'stop' : 'tool_calls' }],
    usage: { prompt_tokens: 40, completion_tokens: 8 },
  };
}

if (!isMainThread && workerData?.perSecond !== undefined) serve(workerData);
