/**
 * SPEC §10.5 containment, through the public API: a fault turn (exit / throw / oom / hang) kills or
 * wedges a pool thread that 12 other busy agents share. Only the faulting driver fails; every other
 * one finishes normally, no tool runs twice, every session stays well-formed and the host survives.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, Brood, TurnResult } from '../../../src/index.js';
import { createBrood, defineTool, scriptedModels } from '../../../src/index.js';
import { ofType } from '../../support/events.js';
import { countingSlowTool, ExecutionCounter } from '../../support/execution-counter.js';
import { route } from '../../support/route.js';
import { tapStore } from '../../support/tap-store.js';
import { expectWellFormed } from '../../support/well-formed.js';

type Fault = 'exit' | 'throw' | 'oom' | 'hang';
const FAULTS: Fault[] = ['exit', 'throw', 'oom', 'hang'];
const OTHERS = 12;
const HANG_TIMEOUT_MS = 1500;

const diagnostics = new Map<Fault, string>();
let brood: Brood | undefined;

afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

function setup(fault: Fault) {
  const tap = tapStore();
  const counter = new ExecutionCounter();
  brood = createBrood({
    sessions: tap.store,
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          // After the fault, the same agent's next turn continues its script (SPEC §8 script position).
          { match: 'faulty', turns: [{ fault }, { text: 'recovered {{prompt}}' }] },
          {
            match: 'worker',
            latencyMs: 30,
            turns: [
              { toolCalls: [{ name: 'slow', arguments: { v: 1 } }] },
              {
                toolCalls: [
                  { name: 'slow', arguments: { v: 2 } },
                  { name: 'slow', arguments: { v: 3 } },
                ],
              },
              { text: 'done {{prompt}}: {{results}}' },
            ],
          },
        ],
      }),
    ],
    // An out-of-memory thread is also silent while it allocates: give the heap limit time to win the
    // race against the hang watchdog, so the diagnostic names the real cause.
    pool: {
      threads: 2,
      hangTimeoutMs: fault === 'oom' ? 8000 : HANG_TIMEOUT_MS,
      cancelGraceMs: 300,
      resourceLimits: { maxOldGenerationSizeMb: 64 },
    },
    codeBusyTimeoutMs: 300,
  });
  brood.tools.register(defineTool(countingSlowTool(counter, 40, (agentId, v) => `${agentId}#${v}`)));
  return { brood, tap, counter };
}

describe.each(FAULTS)("fault '%s' with 12 busy agents on the same 2 threads", (fault) => {
  it('fails only the faulting agent; the others finish normally and no tool runs twice', async () => {
    const { brood, tap, counter } = setup(fault);
    const agents: Agent[] = await Promise.all(
      Array.from({ length: OTHERS + 1 }, (_unused, i) => brood.createAgent({ id: `${fault}-a${i}`, model: route })),
    );
    const faultyIndex = 6;
    const results: TurnResult[] = await Promise.all(
      agents.map((agent, i) => agent.run(i === faultyIndex ? `faulty ${fault}` : `worker ${i}`)),
    );

    const faulty = results[faultyIndex]!;
    expect(faulty.stopReason).toBe('error');
    expect(typeof faulty.diagnostic).toBe('string');
    expect(faulty.diagnostic!.trim()).not.toBe('');
    diagnostics.set(fault, faulty.diagnostic!);
    if (fault === 'oom') expect(faulty.diagnostic).toMatch(/memory/i);

    for (const [i, agent] of agents.entries()) {
      if (i === faultyIndex) continue;
      const id = agent.id;
      expect(results[i]).toMatchObject({ stopReason: 'completed', output: `done worker ${i}: ${id}#2\n${id}#3` });
      expect(results[i]!.diagnostic).toBeUndefined();
      expect(counter.of(id)).toEqual({ call_0_0: 1, call_1_0: 1, call_1_1: 1 });
    }
    expect(counter.of(agents[faultyIndex]!.id)).toEqual({});

    for (const agent of agents) {
      const events = await expectWellFormed(brood.sessions, agent.id);
      const ends = ofType(events, 'turn/end');
      expect(ends).toHaveLength(1);
      if (agent === agents[faultyIndex]) {
        expect(ends[0]!.data).toEqual({ turn: 1, reason: 'error', diagnostic: faulty.diagnostic });
        // SPEC §6: the request the fault ended still gets an assistant/message with finish 'error'.
        expect(ofType(events, 'assistant/message').map((e) => e.data.finish)).toEqual(['error']);
      } else {
        expect(ends[0]!.data).toEqual({ turn: 1, reason: 'completed' });
        expect(ofType(events, 'tool/result').every((e) => e.data.isError === false)).toBe(true);
      }
    }
    expect((await brood.sessions.list()).map((h) => h.id).sort()).toEqual(agents.map((a) => a.id).sort());

    // The faulted agent serves a later turn normally, on a healthy thread.
    const later = await agents[faultyIndex]!.run('and now?');
    expect(later).toMatchObject({ stopReason: 'completed', output: `recovered faulty ${fault}` });
    await expectWellFormed(brood.sessions, agents[faultyIndex]!.id);
    // Untouched agents keep working too.
    expect((await agents[0]!.run('second')).stopReason).toBe('completed');
    await tap.waitFor(agents[0]!.id, 'turn/end', (e) => e.data.turn === 2);
  });
});

it('names the cause: the four fault kinds give four different diagnostics', () => {
  expect([...diagnostics.keys()].sort()).toEqual([...FAULTS].sort());
  expect(new Set(diagnostics.values()).size).toBe(FAULTS.length);
});
