/**
 * What a continuable child's reports may cost its parent (SPEC §16 "Reports"): a report larger than
 * `maxReportBytes` is refused to the child and never reaches the parent, and reports that piled up
 * while the parent was busy reach it in one turn, not one turn each.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../../src/defaults.js';
import { subagentTool } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { ofType } from '../../support/events.js';
import { subagentCall } from '../../support/fan-out.js';
import { route } from '../../support/route.js';
import { closeAfterEach, type Harness, harness, isNotice, type Script } from '../subagents/helpers.js';

const { open } = closeAfterEach();

function setup(scripts: Script[]): Harness {
  const h = harness({ scripts });
  open.push(h);
  return h;
}

const reportCall = (output: string) => ({ toolCalls: [{ name: 'report', arguments: { output } }] });
const isReport = (data: Record<string, unknown>): boolean => data.source === 'subagent-report';

function childOf(h: Harness, parentId: string): string {
  const started = ofType(h.tap.log(parentId), 'tool/result').find((event) => event.data.name === 'subagent');
  const id = /^started subagent (\S+)$/.exec(String(started?.data.content))?.[1];
  if (id === undefined) throw new Error(`no continuable child started by ${parentId}`);
  return id;
}

describe('report size', () => {
  it('refuses a report past maxReportBytes to the child (INVALID_ARGS); the parent never sees it, a shorter one goes through', async () => {
    const h = setup([
      { match: 'go', turns: [{ toolCalls: [subagentCall('survey')] }, { text: 'started' }] },
      { match: 'survey', turns: [reportCall('é'.repeat(600)), reportCall('short finding'), { text: 'done' }] },
    ]);
    h.brood.use(subagentTool({ provider: 'spawn', backgroundMode: 'continuable', maxReportBytes: 1_000 }));
    const parent = await h.brood.createAgent({ model: route });
    await parent.run('go');
    const childId = childOf(h, parent.id);
    await h.tap.waitFor(parent.id, 'user/message', isNotice);
    const answers = ofType(h.tap.log(childId), 'tool/result').filter((event) => event.data.name === 'report');
    // 600 characters of two bytes each: 1,200 bytes.
    expect(answers.map((event) => [event.data.isError, event.data.errorCode ?? null])).toEqual([
      [true, 'INVALID_ARGS'],
      [false, null],
    ]);
    expect(answers[0]?.data.content).toMatch(/at most 1000 bytes and this one is 1200/);
    const reports = ofType(h.tap.log(parent.id), 'user/message').filter((event) => isReport(event.data));
    expect(reports.map((event) => event.data.text)).toEqual([
      `Background subagent ${childId} reported:\nshort finding`,
    ]);
  });

  it('caps reportFrom at the default (1 MiB) when the start named no cap', async () => {
    const h = setup([{ match: 'idle', latencyMs: 5_000, turns: [{ text: 'late' }] }]);
    const parent = await h.brood.createAgent({ model: route });
    const { childId } = await h.brood.subagents.startContinuable({
      provider: 'spawn',
      label: 'worker',
      signal: new AbortController().signal,
      request: { parent, prompt: 'idle' },
    });
    await expectCode(h.brood.subagents.reportFrom(childId, 'x'.repeat(DEFAULTS.maxReportBytes + 1)), 'INVALID_ARGS');
    expect(ofType(h.tap.log(parent.id), 'user/message')).toEqual([]);
    await h.brood.subagents.reportFrom(childId, 'x'.repeat(DEFAULTS.maxReportBytes));
  });

  it('refuses a maxReportBytes that is not a positive safe integer, or on a tool whose children do not report', () => {
    const h = setup([]);
    for (const maxReportBytes of [0, -1, 1.5, Number.POSITIVE_INFINITY]) {
      const error = expectCode(
        () => h.brood.use(subagentTool({ provider: 'spawn', backgroundMode: 'continuable', maxReportBytes })),
        'INVALID_CONFIG',
      );
      expect(error.message).toContain('maxReportBytes');
    }
    expectCode(() => h.brood.use(subagentTool({ provider: 'spawn', maxReportBytes: 10 })), 'INVALID_CONFIG');
  });
});

describe('reports that pile up', () => {
  it('reach a busy parent in one turn once it is free, not one turn each', async () => {
    const h = setup([
      { match: 'go', latencyMs: 300, turns: [{ text: 'first' }, { text: 'second' }, { text: 'third' }] },
      { match: 'idle child', latencyMs: 5_000, turns: [{ text: 'late' }] },
    ]);
    const parent = await h.brood.createAgent({ model: route });
    const running = parent.run('go');
    await h.tap.waitFor(parent.id, 'model/request');
    const { childId } = await h.brood.subagents.startContinuable({
      provider: 'spawn',
      label: 'worker',
      signal: new AbortController().signal,
      request: { parent, prompt: 'idle child' },
    });
    // Five reports while the parent's only step is running: it takes none of them in that turn.
    const ids: string[] = [];
    for (const n of [1, 2, 3, 4, 5]) ids.push(await h.brood.subagents.reportFrom(childId, `finding ${n}`));
    expect((await running).output).toBe('first');
    const next = await h.tap.waitFor(parent.id, 'turn/start', (event) => event.data.turn === 2);
    expect([...((next.data.joined as string[] | undefined) ?? []), ...(next.data.messageIds as string[])]).toEqual(ids);
    await h.tap.waitFor(parent.id, 'turn/end', (event) => event.data.turn === 2);
    expect(ofType(h.tap.log(parent.id), 'model/request')).toHaveLength(2);
  });
});
