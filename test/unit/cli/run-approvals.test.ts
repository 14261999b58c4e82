/**
 * `brood run`'s approver with a scripted terminal: a y/N question per request when a person
 * can answer, `--approve` tools allowed without one, everything else refused without a terminal.
 */
import { afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import { CliApprover, parseApproveFlag } from '../../../src/cli/run-approvals.js';
import { type Brood, defineTool, scriptedModels } from '../../../src/index.js';
import { inlineBrood } from '../../support/runtime.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

/** Runs one turn calling `deploy` (approval: 'ask') with `approver` answering; returns the output and runs. */
async function turnWith(make: (b: Brood) => CliApprover): Promise<{ output: string; runs: number }> {
  let runs = 0;
  const b = inlineBrood({
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          {
            match: 'go',
            turns: [{ toolCalls: [{ name: 'deploy', arguments: { service: 'web' } }] }, { text: 'saw {{results}}' }],
          },
        ],
      }),
    ],
  });
  brood = b;
  b.tools.register(
    defineTool({
      name: 'deploy',
      description: 'deploy',
      parameters: z.object({ service: z.string() }),
      approval: 'ask',
      execute: () => {
        runs += 1;
        return 'deployed';
      },
    }),
  );
  const approver = make(b);
  const controller = new AbortController();
  void (async () => {
    for await (const event of b.events({ signal: controller.signal })) approver.onEvent(event);
  })();
  const agent = await b.createAgent({ model: { provider: 'scripted', model: 'scripted' } });
  const { output } = await agent.run('go');
  controller.abort();
  return { output, runs };
}

it('asks y/N on a terminal, naming the tool and its arguments; "y" runs the call', async () => {
  const questions: string[] = [];
  const io = {
    interactive: true,
    ask: async (question: string) => {
      questions.push(question);
      return 'y';
    },
  };
  const { output, runs } = await turnWith((b) => new CliApprover(b, new Set(), io));
  expect(runs).toBe(1);
  expect(output).toContain('deployed');
  expect(questions).toHaveLength(1);
  expect(questions[0]).toMatch(/allow deploy \{"service":"web"\} \(agent \S+\)\? \[y\/N\]/);
});

it('anything but yes on the terminal denies', async () => {
  const io = { interactive: true, ask: async () => '' };
  const { output, runs } = await turnWith((b) => new CliApprover(b, new Set(), io));
  expect(runs).toBe(0);
  expect(output).toContain('the user said no');
});

it('without a terminal: --approve tools run, others are refused naming the flag', async () => {
  const never = { interactive: false, ask: async () => 'y' };
  expect((await turnWith((b) => new CliApprover(b, parseApproveFlag('x, deploy'), never))).runs).toBe(1);
  await brood?.close();
  brood = undefined;
  const refused = await turnWith((b) => new CliApprover(b, parseApproveFlag(undefined), never));
  expect(refused.runs).toBe(0);
  expect(refused.output).toContain('brood run --approve deploy');
});
