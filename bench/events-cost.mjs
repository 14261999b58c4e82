// Cost of the host event stream: the latency-only fan-out run on one warm runtime with no
// subscriber, then with a `brood.events()` subscriber draining every event (text deltas included),
// interleaved round by round so machine-load drift hits both sides alike. With no subscriber nothing
// is produced or posted across threads, so "off" must match the plain fan-out; "on" shows what a
// host that watches pays. Events counted per child show what the subscriber received.

import { installDelegation, makeBrood, noopTool, timedRun } from './lib/brood.mjs';
import { childTurns, L, parentTurns, THREADS } from './lib/schedule.mjs';
import { median, round } from './lib/stats.mjs';

const P = 64;
const ROOT = 'events-root';

const fanoutOnce = (brood) => timedRun(brood, ROOT, 'events fan-out');

/** Subscribes for the duration of one run; resolves to the number of events received. */
function subscribe(brood) {
  const controller = new AbortController();
  let count = 0;
  const drained = (async () => {
    try {
      for await (const _event of brood.events({ signal: controller.signal })) count += 1;
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
  })();
  return {
    async stop() {
      controller.abort();
      await drained;
      return count;
    },
  };
}

export async function runEventsCost({ quick, log }) {
  const n = quick ? 64 : 256;
  const rounds = quick ? 2 : 4;
  const scripts = [
    {
      match: ROOT,
      latencyMs: L,
      turns: parentTurns(n, 'subagent', (i) => ({ description: `child ${i}`, prompt: `events-child #${i}` })),
    },
    { match: 'events-child ', latencyMs: L, turns: childTurns },
  ];
  const brood = makeBrood({ runner: 'worker', scripts, maxParallelToolCalls: P, threads: THREADS });
  brood.tools.register(noopTool());
  installDelegation(brood);
  try {
    await fanoutOnce(brood); // warm-up: thread start and JIT are not the stream's cost
    const off = [];
    const on = [];
    let eventsPerChild = 0;
    for (let i = 0; i < rounds; i++) {
      off.push(await fanoutOnce(brood));
      const subscription = subscribe(brood);
      on.push(await fanoutOnce(brood));
      eventsPerChild = (await subscription.stop()) / n;
    }
    const offMs = median(off);
    const onMs = median(on);
    const result = {
      n,
      p: P,
      rounds,
      offMs: round(offMs, 1),
      onMs: round(onMs, 1),
      offSamplesMs: off.map((v) => round(v, 1)),
      onSamplesMs: on.map((v) => round(v, 1)),
      onOverOff: round(onMs / offMs, 3),
      eventsPerChild: round(eventsPerChild, 1),
    };
    log(
      `events: N=${n} P=${P} no subscriber ${result.offMs} ms, subscriber ${result.onMs} ms (${result.onOverOff}×, ${result.eventsPerChild} events/child)`,
    );
    return result;
  } finally {
    await brood.close();
  }
}
