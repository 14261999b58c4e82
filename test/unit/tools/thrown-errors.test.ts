/**
 * A tool body that throws: the model reads the error's own name and message, the host's onDiagnostic
 * gets the stack, and a value that is not an Error reads as `Error: <value>`.
 */
import { afterEach, expect, it } from 'vitest';
import { type Brood, defineTool, scriptedModels } from '../../../src/index.js';
import { ToolAnswerError } from '../../../src/tools/thrown.js';
import { route } from '../../support/route.js';
import { inlineBrood } from '../../support/runtime.js';

class QuotaError extends Error {
  override name = 'QuotaError';
}

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

/** A runtime whose model calls `failing` once and echoes what it read; its diagnostics are collected. */
function runtimeThrowing(thrown: () => unknown) {
  const diagnostics: string[] = [];
  brood = inlineBrood({
    onDiagnostic: (message) => diagnostics.push(message),
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          { match: 'go', turns: [{ toolCalls: [{ name: 'failing', arguments: {} }] }, { text: '{{results}}' }] },
        ],
      }),
    ],
  });
  brood.tools.register(
    defineTool({
      name: 'failing',
      description: 'always throws',
      parameters: {},
      execute: () => {
        throw thrown();
      },
    }),
  );
  return { b: brood, diagnostics };
}

async function toolResultOf(b: Brood, agentId: string) {
  const events = (await b.sessions.read(agentId)).events;
  return events.find((event) => event.type === 'tool/result')?.data;
}

it.each<[string, () => unknown, string]>([
  ['a TypeError', () => new TypeError('x is not a function'), 'TypeError: x is not a function'],
  ['a custom error class', () => new QuotaError('monthly quota used up'), 'QuotaError: monthly quota used up'],
  ['a plain Error', () => new Error('boom'), 'Error: boom'],
])('%s reaches the model as <Name>: <message> and its stack reaches onDiagnostic', async (_label, thrown, read) => {
  const { b, diagnostics } = runtimeThrowing(thrown);
  const agent = await b.createAgent({ model: route });
  expect((await agent.run('go')).output).toBe(read);
  expect(await toolResultOf(b, agent.id)).toMatchObject({ isError: true, content: read });
  expect(diagnostics).toHaveLength(1);
  expect(diagnostics[0]).toContain('tool "failing" threw');
  expect(diagnostics[0]).toContain(read);
  // The stack's frames: where the tool threw, for the host and never for the model.
  expect(diagnostics[0]).toMatch(/\n\s+at /);
});

it('a thrown value that is not an Error reads as Error: <value>, also for the host', async () => {
  const { b, diagnostics } = runtimeThrowing(() => 'quota exceeded');
  const agent = await b.createAgent({ model: route });
  expect((await agent.run('go')).output).toBe('Error: quota exceeded');
  expect(diagnostics).toEqual([expect.stringContaining('tool "failing" threw Error: quota exceeded')]);
});

it("brood's own coded errors keep Error: and their code, and are no fault to report", async () => {
  const { b, diagnostics } = runtimeThrowing(() =>
    Object.assign(new RangeError('too deep'), { code: 'DEPTH_EXCEEDED' }),
  );
  const agent = await b.createAgent({ model: route });
  expect((await agent.run('go')).output).toBe('Error: too deep');
  expect(await toolResultOf(b, agent.id)).toMatchObject({ errorCode: 'DEPTH_EXCEEDED' });
  expect(diagnostics).toEqual([]);
});

it("a tool's expected failure (ToolAnswerError: a failed child, a refused path) reads as Error: <message> and is no fault for the host", async () => {
  const { b, diagnostics } = runtimeThrowing(() => new ToolAnswerError('subagent run failed'));
  const agent = await b.createAgent({ model: route });
  expect((await agent.run('go')).output).toBe('Error: subagent run failed');
  expect(await toolResultOf(b, agent.id)).toMatchObject({ isError: true, content: 'Error: subagent run failed' });
  expect(diagnostics).toEqual([]);
});
