// Builds brood runtimes for the benchmarks from the built package (dist/), exactly as a user would.
import * as broodPkg from '../../dist/index.js';
import { withDeadline } from './run-guard.mjs';

const { createBrood, scriptedModels, defineTool, memorySessions } = broodPkg;

export const ROUTE = { provider: 'scripted', model: 'scripted' };

/**
 * Runs `prompt` on a fresh top-level agent (scripts are positional, so agents are single-use) under a
 * deadline and disposes it; resolves to the run's ms (agent creation and disposal excluded). Throws
 * unless the turn completed.
 */
export async function timedRun(brood, prompt, what, deadlineMs = 180_000) {
  const agent = await brood.createAgent({ model: ROUTE });
  try {
    const t0 = performance.now();
    const result = await withDeadline(agent.run(prompt), deadlineMs, what);
    const ms = performance.now() - t0;
    if (result.stopReason !== 'completed')
      throw new Error(`${what} ended ${result.stopReason}: ${result.diagnostic ?? result.output}`);
    return ms;
  } finally {
    await agent.dispose();
  }
}

/**
 * memorySessions() with a hook that sees every append the moment the parent's store receives it,
 * stamped with performance.now(). Session events carry a `time`, but that is wall-clock ms written
 * by whichever thread produced it; the parent-side stamp is sub-ms and on one clock.
 */
export function stampedSessions(onAppend) {
  const inner = memorySessions();
  return {
    create: (header) => inner.create(header),
    append(id, events) {
      onAppend(id, events, performance.now());
      return inner.append(id, events);
    },
    flush: (id) => inner.flush(id),
    read: (id) => inner.read(id),
    list: () => inner.list(),
  };
}

export const noopTool = (overrides = {}) =>
  defineTool({
    name: 'noop',
    description: 'does nothing and returns ok',
    parameters: { type: 'object', properties: {} },
    concurrencySafe: true,
    execute: () => 'ok',
    ...overrides,
  });

/**
 * The model-facing `subagent` tool (SPEC §11) when the build exports it; otherwise an equivalent
 * global tool that starts a spawn child and returns its output, so the benchmark still runs while
 * the delegation module is in progress. Which one ran is recorded in the results.
 */
export function installDelegation(brood, { maxDepth = 3 } = {}) {
  if (typeof broodPkg.subagentTool === 'function') {
    brood.use(broodPkg.subagentTool({ provider: 'spawn', maxDepth }));
    return 'subagentTool';
  }
  brood.tools.register(
    defineTool({
      name: 'subagent',
      description: 'delegate a task to a fresh subagent',
      parameters: {
        type: 'object',
        properties: { description: { type: 'string' }, prompt: { type: 'string' } },
        required: ['description', 'prompt'],
      },
      concurrencySafe: true,
      execute: async ({ prompt, description }, ctx) => {
        const run = await brood.subagents.start('spawn', {
          parent: ctx.agent,
          prompt,
          label: description,
          signal: ctx.signal,
          maxDepth,
        });
        try {
          return (await run.result).output;
        } finally {
          await run.dispose();
        }
      },
    }),
  );
  return 'global-tool';
}

/** One runtime with the given scripts; `runner` is 'worker' or 'inline'. */
export function makeBrood({ runner, scripts, maxParallelToolCalls, threads, sessions, codeMode, telemetry }) {
  return createBrood({
    runner,
    maxParallelToolCalls,
    pool: { threads },
    ...(sessions ? { sessions } : {}),
    ...(codeMode ? { codeMode } : {}),
    ...(telemetry ? { telemetry } : {}),
    models: [scriptedModels({ id: 'scripted', scripts })],
  });
}
