/**
 * A plan's view (system prompt, tool schemas, classes) comes from one resolution of the tool layers:
 * a `forAgent` hook that answers differently from call to call can hide a tool, but never make the
 * prompt (a tool-bound section, the Code Mode SDK) describe a tool the request does not carry, or the
 * other way round.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createBrood, defineTool, memorySessions, scriptedModels } from '../../../src/index.js';
import { route } from '../../support/route.js';

const GUIDE = 'Call flaky for anything uncertain.';

describe('one resolution per view', () => {
  it("a tool-bound section and the Code Mode SDK are in the request's system prompt exactly when the tool is in the request's tools", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { minLength: 1, maxLength: 16 }), async (answers) => {
        let calls = 0;
        const sessions = memorySessions();
        const brood = createBrood({
          runner: 'inline',
          sessions,
          codeMode: 'both',
          models: [scriptedModels({ id: 'scripted', fallback: 'echo' })],
        });
        try {
          brood.tools.register(
            defineTool({
              name: 'flaky',
              description: 'shown or hidden call by call',
              parameters: z.object({}),
              forAgent: () => (answers[calls++ % answers.length] ? {} : false),
              execute: () => 'ok',
            }),
          );
          brood.prompt.register({ name: 'flaky-guide', tool: 'flaky', text: GUIDE });
          const agent = await brood.createAgent({ model: route });
          for (const turn of [1, 2, 3]) await agent.run(`turn ${turn}`);
          const { events } = await sessions.read(agent.id);
          const requests = events.filter((event) => event.type === 'model/request');
          expect(requests).toHaveLength(3);
          for (const request of requests) {
            const data = request.data as { system: string; tools: string[] };
            const presented = data.tools.includes('flaky');
            expect(data.system.includes(GUIDE)).toBe(presented);
            expect(data.system.includes('flaky(args:')).toBe(presented);
          }
        } finally {
          await brood.close();
        }
      }),
      { numRuns: 40 },
    );
  });
});
