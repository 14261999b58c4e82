/** SPEC §11.5/§11.6 edge cases through a third-party provider whose runs we control. */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, BroodOptions } from '../../../src/brood.js';
import { jobTools, subagentTool } from '../../../src/delegation/index.js';
import type {
  SubagentProvider,
  SubagentResult,
  SubagentRun,
  SubagentStartRequest,
} from '../../../src/subagents/types.js';
import { collectDiagnostics } from '../../support/diagnostics.js';
import { route } from '../../support/route.js';
import { behaviourBrood } from '../../support/runtime.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

const usage = { inputTokens: 1, outputTokens: 1 };

function fakeProvider(
  makeRun: (request: SubagentStartRequest) => SubagentRun,
  seen: SubagentStartRequest[] = [],
): SubagentProvider {
  return {
    name: 'fake',
    capabilities: { persona: true, toolFilter: true, depthLimit: true, agentOptions: true, outputSchema: false },
    inheritsParentContext: false,
    start: async (request) => {
      seen.push(request);
      return makeRun(request);
    },
  };
}

const run = (result: Promise<SubagentResult>, dispose: () => Promise<void> = async () => {}): SubagentRun => {
  result.catch(() => undefined);
  return { id: 'fake-child', result, dispose };
};

/** `onDiagnostic` hears the `subagent` tool's throw when the fake run fails it. */
async function setup(
  makeRun: (request: SubagentStartRequest) => SubagentRun,
  config: Record<string, unknown> = {},
  onDiagnostic?: BroodOptions['onDiagnostic'],
) {
  const seen: SubagentStartRequest[] = [];
  brood = behaviourBrood({
    ...(onDiagnostic === undefined ? {} : { onDiagnostic }),
    providers: [fakeProvider(makeRun, seen)],
  });
  brood.use(subagentTool({ provider: 'fake', ...config }));
  const parent = await brood.createAgent({ model: route });
  const exec = (extra: Record<string, unknown> = {}) =>
    parent.tools.execute({ name: 'subagent', arguments: { description: 'label', prompt: 'task', ...extra } });
  return { parent, exec, seen };
}

describe('foreground edge cases', () => {
  it('always awaits dispose, and keeps both failures when collection and disposal fail', async () => {
    const reported = collectDiagnostics();
    const { exec } = await setup(
      () => run(Promise.reject(new Error('store broke')), () => Promise.reject(new Error('dispose broke'))),
      {},
      reported.onDiagnostic,
    );
    const result = await exec();
    expect(result.isError).toBe(true);
    expect(result.content).toContain('store broke');
    expect(result.content).toContain('dispose broke');
    expect(reported.messages.length).toBeGreaterThanOrEqual(1);
  });

  it('a failed disposal after a completed result is an error', async () => {
    const reported = collectDiagnostics();
    const { exec } = await setup(
      () =>
        run(Promise.resolve({ output: 'fine', stopReason: 'completed', usage }), () =>
          Promise.reject(new Error('leak')),
        ),
      {},
      reported.onDiagnostic,
    );
    const result = await exec();
    expect(result).toMatchObject({ isError: true, content: 'Error: subagent completed but disposing it failed: leak' });
    expect(reported.messages.length).toBeGreaterThanOrEqual(1);
  });

  it('awaits disposal before returning', async () => {
    let disposed = false;
    const { exec } = await setup(() =>
      run(Promise.resolve({ output: 'ok', stopReason: 'completed', usage }), async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        disposed = true;
      }),
    );
    expect((await exec()).content).toBe('ok');
    expect(disposed).toBe(true);
  });

  it('renders the diagnostic and partial output of a failed run', async () => {
    const { exec } = await setup(() =>
      run(Promise.resolve({ output: 'par', stopReason: 'error', diagnostic: 'HTTP 503', usage })),
    );
    expect((await exec()).content).toBe(
      'Error: subagent run failed\nDiagnostic: HTTP 503\nPartial output before the run ended:\npar',
    );
  });

  it('copies persona, toolFilter, maxDepth and agentOptions into every start request', async () => {
    const { exec, seen } = await setup(() => run(Promise.resolve({ output: 'ok', stopReason: 'completed', usage })), {
      persona: 'You are terse.',
      toolFilter: { allow: [] },
      maxDepth: 2,
      agentOptions: { maxTokens: 64 },
    });
    await exec();
    await exec();
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatchObject({
      prompt: 'task',
      label: 'label',
      persona: 'You are terse.',
      toolFilter: { allow: [] },
      maxDepth: 2,
      agentOptions: { maxTokens: 64 },
    });
    expect(seen[0]?.toolFilter).not.toBe(seen[1]?.toolFilter);
    expect(seen[0]?.signal).toBeInstanceOf(AbortSignal);
  });
});

describe('background edge cases', () => {
  it('a failed job reports its stop reason and diagnostic in the status line', async () => {
    const { parent, exec } = await setup(() =>
      run(Promise.resolve({ output: 'part', stopReason: 'error', diagnostic: 'worker died', usage })),
    );
    brood!.use(jobTools());
    expect((await exec({ run_in_background: true })).content).toBe('started background subagent job job_1');
    const out = await parent.tools.execute({ name: 'job_output', arguments: { job_id: 'job_1', wait: true } });
    expect(out.content).toBe('part\n[status: failed, error; diagnostic: worker died]');
  });

  it('the job owns its cancellation: aborting the tool call after registration does not stop it', async () => {
    let childSignal: AbortSignal | undefined;
    const { parent } = await setup((request) => {
      childSignal = request.signal;
      return run(
        new Promise<SubagentResult>((resolve) =>
          setTimeout(() => resolve({ output: 'kept', stopReason: 'completed', usage }), 50),
        ),
      );
    });
    const controller = new AbortController();
    const started = await parent.tools.execute({
      name: 'subagent',
      arguments: { description: 'l', prompt: 't', run_in_background: true },
      signal: controller.signal,
    });
    expect(started.content).toBe('started background subagent job job_1');
    controller.abort();
    expect(childSignal?.aborted).toBe(false);
    const out = await parent.tools.execute({ name: 'job_output', arguments: { job_id: 'job_1', wait: true } });
    expect(out.content).toBe('kept\n[status: completed]');
  });
});
