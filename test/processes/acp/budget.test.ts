/**
 * Budgets on an out-of-process (ACP) child: the parent keeps the clock — a spent timeout or idle
 * budget cancels the ACP prompt (`session/cancel`) and the child ends 'budget' with its partial
 * output; maxTokens is checked against the usage the agent reports.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Budget } from '../../../src/index.js';
import { scriptedModels, subagentTool } from '../../../src/index.js';
import { eventsOf, ofType } from '../../support/events.js';
import { subagentCall } from '../../support/fan-out.js';
import { processExists } from '../../support/running.js';
import { type AcpHarness, acpHarness, agentPid, fixtureOptions, signal } from './helpers.js';

let h: AcpHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const start = (prompt: string, budget: Budget) =>
  h!.brood.subagents.start('acp', { parent: h!.lead, prompt, signal: signal(), budget });

describe('acpProvider: budgets', () => {
  it('cancels the ACP prompt when timeoutMs is spent: the child ends budget, the agent process lives on', async () => {
    h = await acpHarness(fixtureOptions());
    const run = await start('hang', { timeoutMs: 200 });
    const result = await run.result;
    expect(result.stopReason).toBe('budget');
    expect(result.output).toBe('working…');
    const turnEnd = (await eventsOf(h.brood, run.id)).find((event) => event.type === 'turn/end');
    expect(turnEnd?.data).toMatchObject({ reason: 'budget', diagnostic: expect.stringMatching(/\(timeout\)/) });
    // Cancelled through ACP, not by killing the process its siblings share.
    expect(processExists(await agentPid(h.brood, run.id))).toBe(true);
  });

  it('ends an ACP child that reports nothing for idleTimeoutMs', async () => {
    h = await acpHarness(fixtureOptions());
    const run = await start('hang', { idleTimeoutMs: 200 });
    expect(await run.result).toMatchObject({ stopReason: 'budget' });
    const turnEnd = (await eventsOf(h.brood, run.id)).find((event) => event.type === 'turn/end');
    expect(turnEnd?.data).toMatchObject({ diagnostic: expect.stringMatching(/\(idle\)/) });
  });

  it('ends budget when the usage the agent reports passes maxTokens, keeping its answer', async () => {
    h = await acpHarness(fixtureOptions());
    const run = await start('echo spend', { maxTokens: 10 }); // the fixture reports 18 tokens
    expect(await run.result).toMatchObject({ stopReason: 'budget', output: 'echo: echo spend' });
    const within = await start('echo spend', { maxTokens: 100 });
    expect(await within.result).toMatchObject({ stopReason: 'completed' });
  });

  it("makes an ACP delegation past subagentTool's budget a failed delegation headed 'subagent run hit its budget (timeout)'", async () => {
    const lead = { match: 'delegate', turns: [{ toolCalls: [subagentCall('hang')] }, { text: 'lead done' }] };
    h = await acpHarness(fixtureOptions(), { models: [scriptedModels({ id: 'scripted', scripts: [lead] })] });
    h.brood.use(subagentTool({ provider: 'acp', maxDepth: 'provider-managed', budget: { timeoutMs: 200 } }));
    const result = await h.lead.run('delegate');
    expect(result.stopReason).toBe('completed');
    const [toolResult] = ofType(await eventsOf(h.brood, h.lead.id), 'tool/result');
    expect(toolResult?.data.isError).toBe(true);
    expect(toolResult?.data.content).toContain('subagent run hit its budget (timeout)');
  });
});
