import { Agent, Runner, Usage, setTracingDisabled, tool } from '@openai/agents-core';
setTracingDisabled(true);
const L = 20, C = +process.argv[4] || 0, N = +process.argv[2] || 16, P = +process.argv[3] || 8;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const burn = (ms) => { const e = performance.now() + ms; while (performance.now() < e); };
class ReplayModel {
  constructor(turns, latencyMs, cpuMs) { Object.assign(this, { turns, latencyMs, cpuMs }); }
  async getResponse(req) {
    const items = Array.isArray(req.input) ? req.input : [];
    let pos = 0; for (let i = 0; i < items.length; i++) if (items[i].type === 'function_call' && items[i - 1]?.type !== 'function_call') pos++;
    await sleep(this.latencyMs); if (this.cpuMs) burn(this.cpuMs);
    const turn = this.turns[pos] ?? { text: 'done' };
    const output = turn.toolCalls ? turn.toolCalls.map((c, i) => ({ type: 'function_call', callId: `call_${pos}_${i}`, name: c.name, arguments: JSON.stringify(c.arguments), status: 'completed' }))
      : [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: turn.text }] }];
    return { usage: new Usage({ requests: 1 }), output, responseId: `r${pos}` };
  }
  async *getStreamedResponse() { throw new Error('not used'); }
}
const noop = tool({ name: 'noop', description: 'noop', parameters: { type: 'object', properties: {}, required: [], additionalProperties: false }, strict: true, execute: async () => 'ok' });
const child = new Agent({ name: 'child', instructions: 'child', model: new ReplayModel([{ toolCalls: [{ name: 'noop', arguments: {} }] }, { toolCalls: [{ name: 'noop', arguments: {} }] }, { text: 'done' }], L, C), tools: [noop] });
const subTool = child.asTool({ toolName: 'subagent', toolDescription: 'delegate' });
const inner = subTool.invoke; let active = 0; const q = [];
subTool.invoke = async (...a) => { if (active >= P) await new Promise((r) => q.push(r)); active++; try { return await inner.apply(subTool, a); } finally { active--; q.shift()?.(); } };
const calls = Array.from({ length: N }, (_, i) => ({ name: 'subagent', arguments: { input: `child-task ${i}` } }));
const parent = new Agent({ name: 'parent', instructions: 'p', model: new ReplayModel([{ toolCalls: calls }, { text: 'ok' }], L, 0), tools: [subTool] });
const runner = new Runner({ tracingDisabled: true });
for (let i = 0; i < 3; i++) { const t = performance.now(); const r = await runner.run(parent, 'fanout-root', { maxTurns: 10 }); console.log('peer', N, P, C, (performance.now() - t).toFixed(1), r.finalOutput); }
