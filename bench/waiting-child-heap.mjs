// What a child waiting on its model holds in its pool thread, by kind of heap object: heap snapshots
// of the one pool thread with N and with 2N children waiting on their first model request (after a
// full collection), and their difference per child. With `http`, the children's model is
// openAICompatible against a loopback server that answers after 5 s (what a real deployment holds);
// with `scripted`, the scripted model (the wide fan-out rows' adapter, brood's share alone).
// Not part of `npm run bench`; needs a build (`npx tsup`).
//   node bench/waiting-child-heap.mjs [scripted|http] [N]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Session } from 'node:inspector';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const INDEX = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const ANSWER_AFTER_MS = 5000;
const SNAPSHOT_AT_MS = 2500;

const [kind = 'http', nArg = '500', snapshotFile] = process.argv.slice(2);
if (snapshotFile) await snapshotOne(kind, Number(nArg), snapshotFile);
else compare(kind, Number(nArg));

/** Runs N and 2N in processes of their own and prints the difference per child, by kind. */
function compare(model, n) {
  const dir = mkdtempSync(join(tmpdir(), 'brood-waiting-'));
  try {
    const files = [n, 2 * n].map((children) => {
      const file = join(dir, `${children}.heapsnapshot`);
      const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), model, String(children), file], {
        stdio: 'inherit',
      });
      if (run.status !== 0) throw new Error(`the ${children}-child run failed`);
      return file;
    });
    const [small, large] = files.map((file) => byKind(JSON.parse(readFileSync(file, 'utf8'))));
    const rows = [...large].map(([key, [count, bytes]]) => {
      const [count0, bytes0] = small.get(key) ?? [0, 0];
      return { key, count: (count - count0) / n, bytes: (bytes - bytes0) / n };
    });
    const total = rows.reduce((sum, row) => sum + row.bytes, 0);
    console.log(`${model}: ${(total / 1024).toFixed(1)} KB per waiting child in its pool thread`);
    for (const row of rows.sort((a, b) => b.bytes - a.bytes).slice(0, 20))
      console.log(`${String(Math.round(row.bytes)).padStart(6)} B  ${row.count.toFixed(2).padStart(6)} ×  ${row.key}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Bytes and counts by node type and (for objects, closures and internals) constructor name. */
function byKind(snapshot) {
  const meta = snapshot.snapshot.meta;
  const width = meta.node_fields.length;
  const at = (field) => meta.node_fields.indexOf(field);
  const [type, name, size] = [at('type'), at('name'), at('self_size')];
  const types = meta.node_types[0];
  const named = new Set(['object', 'closure', 'hidden', 'object shape', 'native', 'code']);
  const out = new Map();
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const t = types[snapshot.nodes[i + type]];
    const key = named.has(t) ? `${t} ${snapshot.strings[snapshot.nodes[i + name]].slice(0, 50)}` : t;
    const entry = out.get(key) ?? [0, 0];
    entry[0] += 1;
    entry[1] += snapshot.nodes[i + size];
    out.set(key, entry);
  }
  return out;
}

/** One runtime, one pool thread, n children waiting; writes that thread's heap snapshot to `file`. */
async function snapshotOne(model, n, file) {
  const { createBrood, openAICompatible, scriptedModels, subagentTool } = await import(INDEX);
  const server = await loopbackModel(n);
  const models =
    model === 'http'
      ? [openAICompatible({ id: 'm', baseURL: server.baseURL, apiKey: 'k', models: ['m'] })]
      : [scriptedModels({ id: 'm', scripts: scriptedFanOut(n) })];
  const brood = createBrood({ runner: 'worker', maxParallelToolCalls: n, pool: { threads: 1 }, models });
  brood.use(subagentTool({ provider: 'spawn' }));
  const route = { provider: 'm', model: model === 'http' ? 'm' : 'scripted' };
  const warm = await brood.createAgent({ model: route });
  await warm.run('warm fan out');
  await warm.dispose();
  const inspector = await workerInspector();
  const root = await brood.createAgent({ model: route });
  const running = root.run('fan out');
  await new Promise((resolve) => setTimeout(resolve, SNAPSHOT_AT_MS));
  writeFileSync(file, await inspector.snapshot());
  inspector.close();
  await running;
  await root.dispose();
  await brood.close();
  server.close();
}

function subagentCalls(n, prompt) {
  return Array.from({ length: n }, (_, i) => ({
    name: 'subagent',
    arguments: { description: `c ${i}`, prompt: `${prompt} ${i}` },
  }));
}

function scriptedFanOut(n) {
  return [
    { match: 'warm fan out', latencyMs: 1, turns: [{ toolCalls: subagentCalls(64, 'warm-child') }, { text: 'done' }] },
    { match: 'fan out', latencyMs: 1, turns: [{ toolCalls: subagentCalls(n, 'wide-child') }, { text: 'done' }] },
    { match: 'warm-child', latencyMs: 10, turns: [{ text: 'child done' }] },
    { match: 'wide-child', latencyMs: ANSWER_AFTER_MS, turns: [{ text: 'child done' }] },
  ];
}

/** A Chat Completions server: the roots fan out, the children are answered after a while. */
async function loopbackModel(n) {
  const answer = (res, message) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        choices: [
          {
            index: 0,
            message: { role: 'assistant', ...message },
            finish_reason: message.tool_calls ? 'tool_calls' : 'stop',
          },
        ],
        usage: { prompt_tokens: 1, completion_tokens: 1 },
      }),
    );
  const toolCalls = (count, prompt) =>
    subagentCalls(count, prompt).map((call, i) => ({
      id: `call_${prompt}_${i}`,
      type: 'function',
      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
    }));
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const messages = JSON.parse(body).messages;
      const first = String(messages.find((m) => m.role === 'user')?.content ?? '');
      if (!first.includes('fan out')) {
        setTimeout(() => answer(res, { content: 'child done' }), first.includes('warm-child') ? 10 : ANSWER_AFTER_MS);
        return;
      }
      if (messages.some((m) => m.role === 'tool')) return answer(res, { content: 'done' });
      const warm = first.includes('warm');
      answer(res, { content: '', tool_calls: toolCalls(warm ? 64 : n, warm ? 'warm-child' : 'wide-child') });
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseURL: `http://127.0.0.1:${server.address().port}/v1`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** The inspector of this process's one worker thread: a full collection, then a heap snapshot. */
async function workerInspector() {
  const session = new Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    );
  const ids = [];
  const replies = new Map();
  const chunks = [];
  let next = 1;
  session.on('NodeWorker.attachedToWorker', ({ params }) => ids.push(params.sessionId));
  session.on('NodeWorker.receivedMessageFromWorker', ({ params }) => {
    const message = JSON.parse(params.message);
    if (message.method === 'HeapProfiler.addHeapSnapshotChunk') chunks.push(message.params.chunk);
    else replies.get(message.id)?.(message);
  });
  await post('NodeWorker.enable', { waitForDebuggerOnStart: false });
  await new Promise((resolve) => setTimeout(resolve, 100));
  const call = async (method, params = {}) => {
    const id = next++;
    const reply = new Promise((resolve) => replies.set(id, resolve));
    await post('NodeWorker.sendMessageToWorker', {
      sessionId: ids[0],
      message: JSON.stringify({ id, method, params }),
    });
    return reply;
  };
  return {
    snapshot: async () => {
      await call('HeapProfiler.enable');
      await call('HeapProfiler.collectGarbage');
      await call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      return chunks.join('');
    },
    close: () => session.disconnect(),
  };
}
