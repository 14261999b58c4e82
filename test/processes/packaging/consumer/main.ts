// A host project that depends on the packed brood and on nothing else: compiled `strict` against the
// published declarations (no skipLibCheck) and run with none of the optional peers installed
// (test/packaging/tarball.test.ts). It prints one JSON report on stdout.
import {
  acpProvider,
  BroodError,
  type BroodErrorCode,
  createBrood,
  defineTool,
  mcpServer,
  mcpTools,
  queueRunner,
  scriptedModels,
  subagentTool,
  type TurnResult,
} from 'brood';
import { z } from 'zod';

interface Outcome {
  code: BroodErrorCode | 'none' | 'foreign';
  message: string;
}

/** A lead delegates one lookup to a child (on a worker thread), which calls a host tool. */
async function delegation(): Promise<{ result: TurnResult; children: number }> {
  const brood = createBrood({
    pool: { threads: 1 }, // one isolate to boot, not one per core: the lead and its child take turns
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          {
            match: 'population of Lyon',
            turns: [{ toolCalls: [{ name: 'lookup', arguments: { city: 'Lyon' } }] }, { text: 'Lyon: {{results}}' }],
          },
          {
            match: 'Ask',
            turns: [
              {
                toolCalls: [
                  { name: 'subagent', arguments: { description: 'population of Lyon', prompt: 'population of Lyon' } },
                ],
              },
              { text: 'Lead: {{results}}' },
            ],
          },
        ],
      }),
    ],
  });
  let children = 0;
  brood.subagents.on('start', () => {
    children += 1;
  });
  brood.tools.register(
    defineTool({
      name: 'lookup',
      description: 'Population of a city.',
      parameters: z.object({ city: z.string() }),
      execute: ({ city }) => (city === 'Lyon' ? 522_000 : 0),
    }),
  );
  brood.use(subagentTool({ provider: 'spawn', maxDepth: 2 }));
  try {
    const lead = await brood.createAgent({ model: { provider: 'scripted', model: 'scripted' } });
    return { result: await lead.run('Ask a helper.'), children };
  } finally {
    await brood.close();
  }
}

async function outcome(attempt: () => Promise<unknown>): Promise<Outcome> {
  try {
    await attempt();
    return { code: 'none', message: '' };
  } catch (error) {
    if (error instanceof BroodError) return { code: error.code, message: error.message };
    return { code: 'foreign', message: String(error) };
  }
}

/** Each optional feature, configured where a host configures it; a runtime that did start is closed. */
const missing = {
  mcpTools: await outcome(async () => {
    const brood = createBrood();
    try {
      await brood.use(mcpTools({ name: 'files', command: process.execPath, args: ['server.js'] }));
    } finally {
      await brood.close();
    }
  }),
  mcpServer: await outcome(async () => {
    const brood = createBrood();
    try {
      mcpServer(brood, { delegation: { provider: 'spawn' } });
    } finally {
      await brood.close();
    }
  }),
  acpProvider: await outcome(async () => {
    await createBrood({ providers: [acpProvider({ name: 'editor', command: process.execPath })] }).close();
  }),
  queueRunner: await outcome(async () => {
    await createBrood({ runner: queueRunner({ connection: 'redis://127.0.0.1:6379' }) }).close();
  }),
  // The host's own tracer object; brood still needs @opentelemetry/api for context and links.
  telemetry: await outcome(async () => {
    await createBrood({ runner: 'inline', telemetry: { tracer: { startSpan: () => ({}) } } }).close();
  }),
};

const { result, children } = await delegation();
process.stdout.write(
  `${JSON.stringify({ output: result.output, stopReason: result.stopReason, children, missing })}\n`,
);
