/**
 * Span times come from the driver's clock: a chat span lasts exactly the interval the driver stamped
 * on its request and answer, even when the parent is too busy to log the answer when it arrives.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, SessionEvent, SessionStore } from '../../../src/index.js';
import { memorySessions, scriptedModels } from '../../../src/index.js';
import { memoryTracing, spanNamed } from '../../support/otel.js';
import { route } from '../../support/route.js';
import { workerBrood } from '../../support/runtime.js';

const models = scriptedModels({
  id: 'scripted',
  scripts: [{ match: 'timed', latencyMs: 40, turns: [{ text: 'first' }] }],
});

/** Blocks this (the parent's) thread for `ms`: the driver's answer arrives while nobody can log it. */
function blockThread(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* busy */
  }
}

/** memorySessions() whose write of each model request keeps the parent's thread busy for a while. */
function busyOnRequests(): SessionStore {
  const inner = memorySessions();
  return {
    ...inner,
    append(id, events) {
      if (events.some((event) => event.type === 'model/request')) blockThread(200);
      return inner.append(id, events);
    },
  };
}

const hrMs = ([seconds, nanos]: [number, number]) => seconds * 1000 + nanos / 1e6;
const stampOf = (event: SessionEvent | undefined): number => {
  const at = event?.data.at;
  if (typeof at !== 'number') throw new Error(`no driver stamp on ${event?.type}`);
  return at;
};

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

describe("span times from the driver's clock", () => {
  it('times a chat span by the driver-stamped request and answer, not by when the parent logged them', async () => {
    const { provider, exporter } = memoryTracing();
    const sessions = busyOnRequests();
    brood = workerBrood({ models: [models], sessions, telemetry: { tracerProvider: provider } });
    const agent = await brood.createAgent({ model: route });
    await agent.run('timed');
    const { events } = await sessions.read(agent.id);
    const request = events.find((event) => event.type === 'model/request');
    const answer = events.find((event) => event.type === 'assistant/message');
    const chat: ReadableSpan = spanNamed(exporter.getFinishedSpans(), 'chat scripted');

    // Stamped at microsecond resolution on the driver's clock, before the parent logged each event.
    expect(stampOf(request)).toBeLessThanOrEqual(request?.time ?? Number.NaN);
    expect(Math.round(stampOf(answer) * 1000)).toBe(stampOf(answer) * 1000);
    // The answer came while the parent was blocked: the parent logged it later than the driver stamped it.
    expect(stampOf(answer)).toBeLessThan(answer?.time ?? Number.NaN);
    expect(hrMs(chat.startTime)).toBeCloseTo(stampOf(request), 3);
    expect(hrMs(chat.endTime)).toBeCloseTo(stampOf(answer), 3);
    expect(hrMs(chat.endTime)).toBeLessThan(answer?.time ?? Number.NaN);
    expect(hrMs(chat.duration)).toBeCloseTo(stampOf(answer) - stampOf(request), 3);
  });
});
