/**
 * createBrood's tool-call hooks reach every call an agent runs, whichever thread its driver is on: a
 * grandchild's call (depth 2) and a call from inside run_code are rewritten and redacted like the
 * lead's own. Real pool and sandbox threads, and the inline runner.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Brood, type HookedToolCall, scriptedModels, subagentTool, type ToolHooks } from '../../../src/index.js';
import { echoTool } from '../../support/echo-tool.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

const delegate = (prompt: string) => ({
  toolCalls: [{ name: 'subagent', arguments: { description: prompt, prompt } }],
});

const CODE = 'return await tools.echo({ text: "secret" });';

const scripts = [
  { match: 'go deep', turns: [delegate('level one'), { text: 'lead read: {{results}}' }] },
  { match: 'level one', turns: [delegate('level two'), { text: 'child read: {{results}}' }] },
  {
    match: 'level two',
    turns: [{ toolCalls: [{ name: 'echo', arguments: { text: 'secret' } }] }, { text: 'grandchild read: {{results}}' }],
  },
  {
    match: 'run code',
    turns: [
      { toolCalls: [{ name: 'run_code', arguments: { description: 'echo inside', code: CODE } }] },
      { text: 'program read: {{results}}' },
    ],
  },
];

/** Hooks that make `echo` run with `rewritten` and redact `rewritten` from what the model reads; calls seen are kept. */
function redacting(): { hooks: ToolHooks; seen: HookedToolCall[] } {
  const seen: HookedToolCall[] = [];
  const hooks: ToolHooks = {
    beforeToolCall: (call) => {
      seen.push(call);
      return call.name === 'echo' ? { ...call, arguments: { text: 'rewritten' } } : undefined;
    },
    afterToolCall: (call, result) =>
      call.name === 'echo' && typeof result.content === 'string'
        ? { content: result.content.replace('rewritten', '[redacted]'), isError: false }
        : undefined,
  };
  return { hooks, seen };
}

function start(runner: (typeof RUNNERS)[number], hooks: ToolHooks, codeMode?: 'both'): { b: Brood; runs: string[] } {
  const runs: string[] = [];
  const b = makeBrood(runner, {
    hooks,
    ...(codeMode ? { codeMode } : {}),
    models: [scriptedModels({ id: 'scripted', scripts })],
  });
  b.use(subagentTool({ provider: 'spawn', enableRunInBackground: false }));
  b.tools.register(echoTool(runs));
  brood = b;
  return { b, runs };
}

describe.each(RUNNERS)('%s runner', (runner) => {
  it("a grandchild's call (depth 2) reaches the hooks; its session records what ran and what it read", async () => {
    const { hooks, seen } = redacting();
    const { b, runs } = start(runner, hooks);
    const lead = await b.createAgent({ model: route });
    const result = await lead.run('go deep');
    expect(runs).toEqual(['rewritten']);
    expect(result.output).toContain('grandchild read: ran [redacted]');
    expect(result.output).not.toContain('secret');
    // The delegation calls at depths 0 and 1 are tool calls too.
    expect(seen.map((call) => [call.name, call.depth])).toEqual([
      ['subagent', 0],
      ['subagent', 1],
      ['echo', 2],
    ]);
    const grandchildId = seen[2]!.agentId;
    const events = (await b.sessions.read(grandchildId)).events;
    const call = events.find((event) => event.type === 'tool/call')?.data;
    const read = events.find((event) => event.type === 'tool/result')?.data;
    expect(call).toMatchObject({ name: 'echo', arguments: JSON.stringify({ text: 'secret' }) });
    expect(read).toMatchObject({ content: 'ran [redacted]', arguments: JSON.stringify({ text: 'rewritten' }) });
  });

  it('a call from inside run_code reaches the hooks: the program gets the rewritten, redacted result', async () => {
    const { hooks, seen } = redacting();
    const { b, runs } = start(runner, hooks, 'both');
    const agent = await b.createAgent({ model: route });
    const result = await agent.run('run code');
    expect(runs).toEqual(['rewritten']);
    expect(result.output).toContain('ran [redacted]');
    expect(seen).toMatchObject([{ name: 'echo', arguments: { text: 'secret' }, agentId: agent.id, depth: 0 }]);
  });
});
