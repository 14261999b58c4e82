// What a child waiting on its model holds in its pool thread, by kind of heap object: heap snapshots
// of the one pool thread with N and with 2N children waiting on their first model request (after a
// full collection), and their difference per child. With `http`, the children's model is
// openAICompatible against a loopback server that answers after 5 s (what a real deployment holds);
// with `scripted`, the scripted model (the wide fan-out rows' adapter, brood's share alone).
// Not part of `npm run bench`; needs a build (`npx tsup`).
//   node bench/waiting-child-heap.mjs [scripted|http] [N]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeHeapSnapshot } from 'node:v8';
// Before brood starts its pool: this module records the threads it snapshots.
import { collectPoolThreads } from './lib/pool-threads.mjs';

const INDEX = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const HEAP_DIFF = fileURLToPath(new URL('./heap-diff.mjs', import.meta.url));
const ANSWER_AFTER_MS = 5000;
const SNAPSHOT_AT_MS = 2500;

const [kind = 'http', nArg = '500', snapshotPrefix] = process.argv.slice(2);
if (snapshotPrefix) await snapshotOne(kind, Number(nArg), snapshotPrefix);
else compare(kind, Number(nArg));

/** Snapshots with N and 2N children waiting, each in a process of its own, then bench/heap-diff.mjs per child. */
function compare(model, n) {
  const dir = mkdtempSync(join(tmpdir(), 'brood-waiting-'));
  const run = (args) => {
    const done = spawnSync(process.execPath, args, { stdio: 'inherit' });
    if (done.status !== 0) throw new Error(`${args.join(' ')} failed`);
  };
  try {
    const [small, large] = [n, 2 * n].map((children) => {
      const prefix = join(dir, String(children));
      run([fileURLToPath(import.meta.url), model, String(children), prefix]);
      return prefix;
    });
    console.log(`${model}: what a waiting child holds in its pool thread`);
    run([HEAP_DIFF, `${small}-w0.heapsnapshot`, `${large}-w0.heapsnapshot`, '--children', String(n), '--top', '20']);
    console.log(`${model}: what a waiting child holds in the parent`);
    run([
      HEAP_DIFF,
      `${small}-main.heapsnapshot`,
      `${large}-main.heapsnapshot`,
      '--children',
      String(n),
      '--top',
      '40',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One runtime, one pool thread, n children waiting; writes that thread's heap snapshot (`<prefix>-w0`). */
async function snapshotOne(model, n, prefix) {
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
  const root = await brood.createAgent({ model: route });
  const running = root.run('fan out');
  await new Promise((resolve) => setTimeout(resolve, SNAPSHOT_AT_MS));
  await collectPoolThreads(prefix); // a snapshot collects the thread's garbage first
  writeHeapSnapshot(`${prefix}-main.heapsnapshot`);
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
