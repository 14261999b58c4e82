// aiSdkModels: what the proxied shape costs per model request. One agent on a pool thread runs a turn
// of `steps` model requests against an AI SDK model that answers at once (a tool call per request;
// bench/lib/ai-sdk-instant.mjs). The module shape builds that model in the thread; the proxied shape
// keeps it in the parent, so each request crosses to it (open, then batches of stream parts). The
// difference per request is the proxy's cost; the tool-RPC round trip is the yardstick.
import * as broodPkg from '../dist/index.js';
import { instantModel } from './lib/ai-sdk-instant.mjs';
import { withDeadline } from './lib/run-guard.mjs';
import { round } from './lib/stats.mjs';

const { aiSdkModels, createBrood, defineTool } = broodPkg;
const MODULE = new URL('./lib/ai-sdk-instant.mjs', import.meta.url);

async function perRequestUs(shape, steps, rounds) {
  const models =
    shape === 'module'
      ? aiSdkModels({ id: 'ai', module: MODULE, export: 'instantModel', options: { steps }, models: ['m'] })
      : aiSdkModels({ id: 'ai', models: { m: instantModel('m', { steps }) } });
  const brood = createBrood({ runner: 'worker', pool: { threads: 1 }, maxSteps: steps + 1, models: [models] });
  brood.tools.register(
    defineTool({ name: 'noop', description: 'Does nothing.', parameters: { type: 'object' }, execute: () => 'ok' }),
  );
  try {
    let best = Number.POSITIVE_INFINITY;
    for (let r = 0; r < rounds; r++) {
      const agent = await brood.createAgent({ model: { provider: 'ai', model: 'm' } });
      const t0 = performance.now();
      const result = await withDeadline(agent.run('go'), 120_000, `ai-sdk ${shape}`);
      const us = ((performance.now() - t0) * 1000) / (steps + 1);
      await agent.dispose();
      if (result.stopReason !== 'completed') throw new Error(`ai-sdk ${shape} ended ${result.stopReason}`);
      best = Math.min(best, us); // the first rounds carry thread boot and JIT warm-up
    }
    return round(best, 1);
  } finally {
    await brood.close();
  }
}

export async function runAiSdkProxy({ quick, log }) {
  const steps = quick ? 100 : 400;
  const rounds = 4;
  const moduleUs = await perRequestUs('module', steps, rounds);
  const proxiedUs = await perRequestUs('proxied', steps, rounds);
  const out = { steps, moduleUs, proxiedUs, proxyCostUs: round(proxiedUs - moduleUs, 1) };
  log(
    `ai-sdk: ${steps} requests per turn, per request: module ${moduleUs} µs, proxied ${proxiedUs} µs (proxy +${out.proxyCostUs} µs)`,
  );
  return out;
}

// `node bench/ai-sdk-proxy.mjs [--quick]`: this figure alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  await runAiSdkProxy({ quick: process.argv.includes('--quick'), log: console.log });
  process.exit(0);
}
