// The peer: OpenAI Agents SDK (@openai/agents-core, from bench/package.json) running the same
// fan-out as agents-as-tools. A replay `Model` serves the same scripted turns with the same latency
// and CPU. The SDK runs everything on the main thread, so its CPU burns land there, as they would
// for any single-threaded agent runtime.
import { burnCpu, childTurns, K, L, parentTurns } from './lib/schedule.mjs';
import { sleep } from './lib/stats.mjs';

let sdk;

/** Loads the SDK once; returns { available, version?, reason? } so the suite can run without it. */
export async function loadPeer() {
  try {
    sdk = await import('@openai/agents-core');
    sdk.setTracingDisabled(true);
    // The package's exports map hides package.json, so read it from disk.
    const { readFileSync } = await import('node:fs');
    const { version } = JSON.parse(
      readFileSync(new URL('./node_modules/@openai/agents-core/package.json', import.meta.url), 'utf8'),
    );
    return { available: true, name: '@openai/agents-core', version };
  } catch (error) {
    return {
      available: false,
      name: '@openai/agents-core',
      reason: `cannot load: ${error.message.split('\n')[0]} (run \`cd bench && npm install\`)`,
    };
  }
}

/**
 * Replays `turns`. The position is the number of model turns already in the input (runs of
 * consecutive function_call items), mirroring brood's "assistant messages in own history".
 */
class ReplayModel {
  constructor(turns, cpuMs, latencyMs) {
    this.turns = turns;
    this.cpuMs = cpuMs;
    this.latencyMs = latencyMs;
  }
  async getResponse(request) {
    const items = Array.isArray(request.input) ? request.input : [];
    let position = 0;
    for (let i = 0; i < items.length; i++)
      if (items[i].type === 'function_call' && items[i - 1]?.type !== 'function_call') position++;
    await sleep(this.latencyMs);
    if (this.cpuMs > 0) burnCpu(this.cpuMs);
    const turn = this.turns[position] ?? { text: 'done' };
    const output = turn.toolCalls
      ? turn.toolCalls.map((call, i) => ({
          type: 'function_call',
          callId: `call_${position}_${i}`,
          name: call.name,
          arguments: JSON.stringify(call.arguments),
          status: 'completed',
        }))
      : [
          {
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: turn.text }],
          },
        ];
    return { usage: new sdk.Usage({ requests: 1 }), output, responseId: `replay_${position}` };
  }
  /** An async iterable whose first step fails: the benchmark only makes non-streamed runs. */
  getStreamedResponse() {
    return {
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('the benchmark uses non-streamed runs')) }),
    };
  }
}

/**
 * The SDK runs all function calls of a step concurrently with no cap, so P is applied with a
 * semaphore around the agent tool's invoke — the equivalent of brood's maxParallelToolCalls.
 */
function capConcurrency(agentTool, limit) {
  const invoke = agentTool.invoke;
  let active = 0;
  const waiting = [];
  agentTool.invoke = async (...args) => {
    if (active >= limit) await new Promise((resolve) => waiting.push(resolve));
    active++;
    try {
      return await invoke.apply(agentTool, args);
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
  return agentTool;
}

export async function peerFanout({ n, p, cpuMs, latencyMs = L }) {
  const { Agent, Runner, tool } = sdk;
  const noop = tool({
    name: 'noop',
    description: 'does nothing and returns ok',
    parameters: { type: 'object', properties: {}, required: [], additionalProperties: false },
    strict: true,
    execute: async () => 'ok',
  });
  const child = new Agent({
    name: 'child',
    instructions: 'You are a child agent.',
    model: new ReplayModel(childTurns, cpuMs, latencyMs),
    tools: [noop],
  });
  const subagent = capConcurrency(child.asTool({ toolName: 'subagent', toolDescription: 'delegate a task' }), p);
  const turns = parentTurns(n, 'subagent', (i) => ({ input: `child-task ${i}` }));
  const parent = new Agent({
    name: 'parent',
    instructions: 'You delegate.',
    model: new ReplayModel(turns, 0, latencyMs),
    tools: [subagent],
  });
  const result = await new Runner({ tracingDisabled: true }).run(parent, 'fanout-root', { maxTurns: K + 2 });
  if (result.finalOutput !== 'all children finished')
    throw new Error(`peer run ended unexpectedly: ${result.finalOutput}`);
}
