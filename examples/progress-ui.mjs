// A progress UI on brood.events(): one line per child run and tool call, the lead's answer streamed.
import { createBrood, scriptedModels, subagentTool } from 'brood';

const delegate = (topic) => ({ name: 'subagent', arguments: { description: topic, prompt: `Find ${topic} in Lyon` } });
const models = [
  scriptedModels({
    id: 'scripted',
    scripts: [
      {
        match: 'Plan a day',
        turns: [
          { text: 'Asking two helpers.', toolCalls: [delegate('trains'), delegate('museums')] },
          { text: 'Plan: {{results}}' },
        ],
      },
      { match: 'Find', latencyMs: 40, turns: [{ text: 'found {{prompt}}' }] },
    ],
  }),
];
const brood = createBrood({ models });
brood.use(subagentTool({ provider: 'spawn' }));
const ui = (async () => {
  for await (const e of brood.events()) {
    const indent = '  '.repeat(e.depth);
    if (e.type === 'subagent-start') console.log(`${indent}▶ ${e.mode} child started`);
    if (e.type === 'subagent-end') console.log(`${indent}■ child ${e.stopReason} (${e.usage.outputTokens} tokens out)`);
    if (e.type === 'tool-start') console.log(`${indent}· ${e.name} ${JSON.stringify(e.args.description ?? '')}`);
    if (e.type === 'text-delta' && e.depth === 0) process.stdout.write(e.delta);
    if (e.type === 'assistant-message' && e.depth === 0 && e.text !== '') process.stdout.write('\n');
  }
})();
const lead = await brood.createAgent({ model: { provider: 'scripted', model: 'scripted' } });
const result = await lead.run('Plan a day in Lyon');
await brood.close(); // ends the event stream
await ui;
console.log(`lead ${result.stopReason}`);
