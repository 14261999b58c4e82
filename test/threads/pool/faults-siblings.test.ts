/**
 * Fault injection among 16 sibling children delegated through `subagentTool` in ONE assistant message.
 * All drivers share a single pool thread (threads: 1), so the parent and every sibling are always
 * co-hosted with the faulting child: they must be recovered, not merely lucky. Per scenario:
 * - the parent and the 15 other siblings finish normally, results committed in model order;
 * - the faulted child ends with a specific, observable outcome;
 * - no tool body runs twice (per agent + callId) and no delegation starts twice;
 * - the host survives and the runtime keeps serving.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Brood, ScriptedTurn, SessionEvent } from '../../../src/index.js';
import { createBrood, defineTool, moduleAdapter, scriptedModels, subagentTool } from '../../../src/index.js';
import { collectDiagnostics } from '../../support/diagnostics.js';
import { ofType } from '../../support/events.js';
import { countingSlowTool, ExecutionCounter } from '../../support/execution-counter.js';
import { recordLifecycle, withTimeout } from '../../support/lifecycle.js';
import { route } from '../../support/route.js';
import { tapStore } from '../../support/tap-store.js';

const SIBLINGS = 16;
const FAULTED = 5; // index of the faulted sibling in the assistant message
const HANG_JOB = 'job_1'; // job ids are runtime-local counters; the hang child is the only background call

let dir: string;
let garbageUrl: string;
let brood: Brood | undefined;

/**
 * A custom adapter (kind 'module') that misbehaves according to the agent's first own message:
 * a tool call without a name, a thrown error, or a response of the wrong shape.
 */
const GARBAGE_ADAPTER = `
export function createAdapter(config) {
  return {
    async request(request) {
      const first = request.messages[request.ownStart];
      const text = first && first.role === 'user' ? first.text : '';
      if (text.includes('noname')) {
        return { text: '', toolCalls: [{ callId: 'g_1', arguments: '{"v":1}' }], finish: 'tool-calls', usage: { inputTokens: 1, outputTokens: 1 } };
      }
      if (text.includes('throws')) throw new Error('adapter exploded');
      if (text.includes('shape')) return { nonsense: true };
      return { text: 'fine', toolCalls: [], finish: 'stop', usage: { inputTokens: 1, outputTokens: 1 } };
    },
  };
}
`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'brood-garbage-'));
  const file = join(dir, 'garbage-adapter.mjs');
  writeFileSync(file, GARBAGE_ADAPTER);
  garbageUrl = pathToFileURL(file).href;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

interface Scenario {
  name: string;
  /** The faulted child's prompt (a script or the garbage adapter keys on it). */
  prompt: string;
  extra?: Record<string, unknown>;
  /** What the faulted child's (last) turn/end must say. */
  childEnd: { reason: string; diagnostic?: RegExp };
  /** The parent's tool/result for the faulted call. */
  parentResult: { isError: boolean; content: RegExp; errorCode?: string };
  /** Extra assertions on the faulted child's own session. */
  check?: (events: SessionEvent[], counter: ExecutionCounter, childId: string) => void;
  /**
   * What createBrood's onDiagnostic must be told, once, for a fault it reports (then the scenario's
   * runtime collects its diagnostics; the others keep the default process warning).
   */
  reported?: string;
}

const slow = (v: number) => ({ name: 'slow', arguments: { v } });
const failedRun = /^Error: subagent run failed\nDiagnostic: \S/;

const SCENARIOS: Scenario[] = [
  {
    name: 'a tool body that throws',
    prompt: 'explode please',
    childEnd: { reason: 'completed' },
    parentResult: { isError: false, content: /^survived: Error: kaboom$/ },
    reported: 'tool "explode" threw',
    check(events, counter, childId) {
      const results = ofType(events, 'tool/result');
      expect(results).toHaveLength(1);
      expect(results[0]!.data).toMatchObject({
        callId: 'call_0_0',
        name: 'explode',
        isError: true,
        content: 'Error: kaboom',
      });
      expect(counter.of(childId)).toEqual({ call_0_0: 1 });
    },
  },
  {
    name: "fault 'throw' (uncaught error in the worker)",
    prompt: 'fault throw',
    childEnd: { reason: 'error', diagnostic: /\S/ },
    parentResult: { isError: true, content: failedRun },
  },
  {
    name: "fault 'exit' (process.exit in the worker)",
    prompt: 'fault exit',
    childEnd: { reason: 'error', diagnostic: /\S/ },
    parentResult: { isError: true, content: failedRun },
  },
  {
    name: "fault 'oom' (heap exhaustion at maxOldGenerationSizeMb 64)",
    prompt: 'fault oom',
    childEnd: { reason: 'error', diagnostic: /memory/i },
    parentResult: { isError: true, content: failedRun },
  },
  {
    name: 'a child that hangs past the cancellation grace (parent kills its job)',
    prompt: 'fault hang',
    extra: { run_in_background: true },
    childEnd: { reason: 'aborted', diagnostic: /force/i },
    parentResult: { isError: false, content: new RegExp(`^started background subagent job ${HANG_JOB}$`) },
  },
  {
    name: 'a busy loop in run_code (codeMode both)',
    prompt: 'spin in code',
    childEnd: { reason: 'completed' },
    parentResult: { isError: false, content: /^after: Error: .*codeBusyTimeoutMs/s },
    check(events) {
      const [result] = ofType(events, 'tool/result');
      expect(result!.data).toMatchObject({ name: 'run_code', isError: true });
      expect(String(result!.data.content)).toContain('before the spin'); // logs are kept
    },
  },
  {
    name: 'an adapter that returns a tool call without a name',
    prompt: 'garbage noname',
    extra: { provider: 'garbage', model: 'g' },
    childEnd: { reason: 'error', diagnostic: /malformed response: toolCalls\.0\.name/ },
    parentResult: { isError: true, content: failedRun },
    check(events, counter, childId) {
      // The malformed call never reaches a tool body.
      expect(counter.of(childId)).toEqual({});
      expect(ofType(events, 'tool/result').filter((e) => !e.data.isError)).toEqual([]);
    },
  },
  {
    name: 'an adapter that throws',
    prompt: 'garbage throws',
    extra: { provider: 'garbage', model: 'g' },
    childEnd: { reason: 'error', diagnostic: /adapter exploded/ },
    parentResult: { isError: true, content: failedRun },
  },
  {
    name: 'an adapter that returns a response of the wrong shape',
    prompt: 'garbage shape',
    extra: { provider: 'garbage', model: 'g' },
    childEnd: { reason: 'error', diagnostic: /malformed response/ },
    parentResult: { isError: true, content: failedRun },
  },
];

function setup(scenario: Scenario) {
  const tap = tapStore();
  const reported = collectDiagnostics();
  const counter = new ExecutionCounter();
  const garbage = moduleAdapter({ id: 'garbage', models: ['g'], moduleUrl: garbageUrl });
  const calls = Array.from({ length: SIBLINGS }, (_unused, i) =>
    i === FAULTED
      ? { name: 'subagent', arguments: { description: 'faulted child', prompt: scenario.prompt, ...scenario.extra } }
      : { name: 'subagent', arguments: { description: `sibling ${i}`, prompt: `worker ${i}` } },
  );
  const hang = scenario.prompt === 'fault hang';
  const parentTurns: ScriptedTurn[] = [
    { toolCalls: calls },
    ...(hang
      ? [{ toolCalls: [{ name: 'job_output', arguments: { job_id: HANG_JOB, wait: true, timeout_ms: 20_000 } }] }]
      : []),
    { text: 'parent done' },
  ];
  const b = createBrood({
    ...(scenario.reported === undefined ? {} : { onDiagnostic: reported.onDiagnostic }),
    sessions: tap.store,
    maxParallelToolCalls: SIBLINGS,
    codeMode: scenario.prompt === 'spin in code' ? 'both' : 'native',
    codeBusyTimeoutMs: 300,
    // One thread: the parent and every sibling share the culprit's thread and must be recovered.
    // The watchdog is slow so the heap limit (oom) and the cancellation grace (hang) decide first.
    pool: { threads: 1, hangTimeoutMs: 8_000, cancelGraceMs: 300, resourceLimits: { maxOldGenerationSizeMb: 64 } },
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          { match: 'delegate', turns: parentTurns },
          {
            match: 'explode please',
            turns: [{ toolCalls: [{ name: 'explode', arguments: {} }] }, { text: 'survived: {{results}}' }],
          },
          ...(['throw', 'exit', 'oom', 'hang'] as const).map((fault) => ({
            match: `fault ${fault}`,
            turns: [{ fault }],
          })),
          {
            match: 'spin in code',
            turns: [
              {
                toolCalls: [
                  {
                    name: 'run_code',
                    arguments: { description: 'spin', code: 'console.log("before the spin"); for (;;) {}' },
                  },
                ],
              },
              { text: 'after: {{results}}' },
            ],
          },
          {
            match: 'worker',
            latencyMs: 20,
            turns: [
              { toolCalls: [slow(1)] },
              { toolCalls: [slow(2), slow(3)] },
              { text: 'done {{prompt}}: {{results}}' },
            ],
          },
        ],
      }),
      garbage,
    ],
  });
  brood = b;
  b.use(subagentTool({ provider: 'spawn', enableModelSelection: true }));
  b.tools.register(defineTool(countingSlowTool(counter, 15, (_agentId, v) => `v${v}`)));
  b.tools.register(
    defineTool({
      name: 'explode',
      description: 'always throws',
      parameters: { type: 'object', properties: {} },
      concurrencySafe: true,
      execute(_args, ctx) {
        counter.hit(ctx.agent?.id, ctx.callId);
        throw Object.assign(new Error('kaboom'), { code: 'E_KABOOM' });
      },
    }),
  );
  return { brood: b, tap, counter, lifecycle: recordLifecycle(b), reported };
}

const diagnostics = new Map<string, string>();

describe.each(SCENARIOS)('16 siblings, one faulted by $name', (scenario) => {
  it('the parent and the other 15 finish normally in model order; the faulted one has a specific outcome', async () => {
    const { brood, tap, counter, lifecycle, reported } = setup(scenario);
    const parent = await brood.createAgent({ id: 'parent', model: route });
    const running = parent.run('delegate everything');

    if (scenario.prompt === 'fault hang') {
      // The parent cancels the spinning child (job_kill runs as the parent, through its resolver).
      const childId = await tap.waitForAny('user/message', (e) => e.data.text === 'fault hang');
      await tap.waitFor(childId, 'model/request');
      const kill = await parent.tools.execute({ name: 'job_kill', arguments: { job_id: HANG_JOB } });
      expect(kill).toMatchObject({ isError: false, content: `requested cancellation of job ${HANG_JOB}` });
    }

    const result = await withTimeout(running, 25_000, 'parent run');
    expect(result).toMatchObject({ stopReason: 'completed', output: 'parent done' });
    expect(result.diagnostic).toBeUndefined();

    const parentEvents = (await brood.sessions.read(parent.id)).events;
    const delegations = ofType(parentEvents, 'tool/result').filter((e) => e.data.name === 'subagent');
    // Committed in model order: call_0_0 … call_0_15.
    expect(delegations.map((e) => e.data.callId)).toEqual(Array.from({ length: SIBLINGS }, (_u, i) => `call_0_${i}`));
    for (const [i, event] of delegations.entries()) {
      if (i === FAULTED) continue;
      expect(event.data).toMatchObject({ isError: false, content: `done worker ${i}: v2\nv3` });
    }
    const faulted = delegations[FAULTED]!.data;
    expect(faulted.isError).toBe(scenario.parentResult.isError);
    expect(String(faulted.content)).toMatch(scenario.parentResult.content);
    expect(faulted.errorCode).toBe(scenario.parentResult.errorCode);

    // Exactly one start and one end per delegation: a recovered parent re-attaches, it never re-delegates.
    const children = lifecycle.starts.filter((s) => s.parentId === parent.id);
    expect(children).toHaveLength(SIBLINGS);
    expect(new Set(children.map((s) => s.id)).size).toBe(SIBLINGS);
    expect(children.every((s) => s.depth === 1)).toBe(true);
    expect(lifecycle.ends.filter((e) => children.some((s) => s.runId === e.runId))).toHaveLength(SIBLINGS);

    let faultedId: string | undefined;
    for (const child of children) {
      const events = (await brood.sessions.read(child.id)).events;
      const prompt = String(ofType(events, 'user/message')[0]!.data.text);
      const ends = ofType(events, 'turn/end');
      expect(ends).toHaveLength(1);
      if (prompt === scenario.prompt) {
        faultedId = child.id;
        expect(ends[0]!.data.reason).toBe(scenario.childEnd.reason);
        if (scenario.childEnd.diagnostic) {
          expect(String(ends[0]!.data.diagnostic)).toMatch(scenario.childEnd.diagnostic);
          diagnostics.set(scenario.name, String(ends[0]!.data.diagnostic));
        } else {
          expect(ends[0]!.data.diagnostic).toBeUndefined();
        }
        scenario.check?.(events, counter, child.id);
      } else {
        expect(ends[0]!.data).toEqual({ turn: 1, reason: 'completed' });
        expect(counter.of(child.id)).toEqual({ call_0_0: 1, call_1_0: 1, call_1_1: 1 });
      }
    }
    expect(faultedId).toBeDefined();
    expect(counter.max()).toBe(1); // no tool body ran twice, anywhere
    if (scenario.reported !== undefined)
      expect(reported.messages).toEqual([expect.stringContaining(scenario.reported)]);

    if (scenario.prompt === 'fault hang') {
      const output = ofType(parentEvents, 'tool/result').find((e) => e.data.name === 'job_output')!;
      expect(String(output.data.content)).toMatch(/\[status: killed\]$/);
    }

    // The host survived and the runtime keeps serving, on a healthy thread.
    expect((await parent.run('again')).stopReason).toBe('completed');
  });
});

it('the thread-killing faults are told apart by their diagnostics', () => {
  const kinds = [
    "fault 'throw' (uncaught error in the worker)",
    "fault 'exit' (process.exit in the worker)",
    "fault 'oom' (heap exhaustion at maxOldGenerationSizeMb 64)",
  ];
  const seen = kinds.map((k) => diagnostics.get(k));
  expect(seen.every((d) => typeof d === 'string')).toBe(true);
  expect(new Set(seen).size).toBe(kinds.length);
});
