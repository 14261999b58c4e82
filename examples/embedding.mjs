// Embedding brood in a host: one runtime, a host tool, a delegation tool, an agent that fans out.
// Runs offline with scripted models; swap in openAICompatible(...) for a real endpoint (see README.md).
// Run: npm run build && node examples/embedding.mjs

import { createBrood, defineTool, memorySessions, scriptedModels, subagentTool } from 'brood';
import { z } from 'zod';

const route = { provider: 'scripted', model: 'scripted' };
const ask = (city) => ({
  name: 'subagent',
  arguments: { description: `population of ${city}`, prompt: `Find the population of ${city}.` },
});

const brood = createBrood({
  sessions: memorySessions(),
  models: [
    scriptedModels({
      id: 'scripted',
      scripts: [
        // Each child calls the host tool, then answers with the tool's result.
        {
          match: 'population of Lyon',
          turns: [
            { toolCalls: [{ name: 'lookup_population', arguments: { city: 'Lyon' } }] },
            { text: 'Lyon: {{results}}' },
          ],
        },
        {
          match: 'population of Graz',
          turns: [
            { toolCalls: [{ name: 'lookup_population', arguments: { city: 'Graz' } }] },
            { text: 'Graz: {{results}}' },
          ],
        },
        // The lead delegates both lookups in one assistant message, so they run in parallel.
        { match: 'Compare', turns: [{ toolCalls: [ask('Lyon'), ask('Graz')] }, { text: 'Comparison:\n{{results}}' }] },
      ],
    }),
  ],
});

// Host tools run in the host process (main thread), whichever worker thread the calling agent runs on.
brood.tools.register(
  defineTool({
    name: 'lookup_population',
    description: 'Population of a city from the host database.',
    parameters: z.object({ city: z.string() }),
    concurrencySafe: true,
    execute: ({ city }) => ({ Lyon: 522_000, Graz: 291_000 })[city] ?? 'unknown',
  }),
);
brood.use(subagentTool({ provider: 'spawn', maxDepth: 2 }));
brood.subagents.on('start', (e) => console.log(`start ${e.id} depth ${e.depth} (parent ${e.parentId})`));
brood.subagents.on('end', (e) => console.log(`end   ${e.id} ${e.stopReason}`));

try {
  const lead = await brood.createAgent({ model: route });
  const result = await lead.run('Compare the populations of Lyon and Graz.');
  console.log(result.output);
  console.log(
    `stop: ${result.stopReason}; usage (incl. children): ${result.usage.inputTokens} in / ${result.usage.outputTokens} out`,
  );
  console.log(`sessions: ${(await brood.sessions.list()).length}`);
} finally {
  await brood.close();
}
