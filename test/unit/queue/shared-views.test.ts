/**
 * A plan's view crosses a parent–host link once: the first `place` of a view carries it and its number,
 * later ones the number alone; the host fills the view in from the number, and answers `full` (the
 * activation is then queued as a job, view and all) for a number it does not know.
 */
import { describe, expect, it } from 'vitest';
import { ParentEnd } from '../../../src/queue/host-parent.js';
import type { JobData } from '../../../src/queue/job.js';
import { KnownViews, SentViews } from '../../../src/queue/shared-views.js';
import type { DriverView } from '../../../src/wire/protocol.js';
import { planDefaults } from '../../support/plan.js';

const view = (system: string): DriverView => ({ system, tools: [], classes: { run_code: 'exclusive' } });

function job(a: number, planView: DriverView | null): JobData {
  return {
    parent: 'parent-1',
    a,
    timeoutMs: 10_000,
    models: '0123456789abcdef0123456789abcdef',
    plan: {
      agentId: `agent-${a}`,
      route: { provider: 'scripted', model: 'scripted' },
      view: planView,
      ...planDefaults(),
      cells: [0],
      eventsFlag: false,
    },
  };
}

/** A JSON round trip, as a list entry makes: nothing is shared between the two sides. */
const crossed = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('views shared on a link', () => {
  it('the first place of a view carries it; later ones of the same view carry its number, and the host fills it in', () => {
    const sent = new SentViews();
    const known = new KnownViews();
    const first = sent.place(job(1, view('you help')));
    const second = sent.place(job(2, view('you help')));
    expect(first.job.plan.view).toEqual(view('you help'));
    expect(second.job.plan.view).toBeNull();
    expect(second.view).toBe(first.view);
    expect(known.resolve(crossed(first.job), first.view)?.plan.view).toEqual(view('you help'));
    expect(known.resolve(crossed(second.job), second.view)).toEqual(job(2, view('you help')));
  });

  it('a different view gets its own number and crosses whole once', () => {
    const sent = new SentViews();
    const first = sent.place(job(1, view('one')));
    const other = sent.place(job(2, view('two')));
    expect(other.view).not.toBe(first.view);
    expect(other.job.plan.view).toEqual(view('two'));
  });

  it('a plan without a view (the parent could not resolve it) is placed as it is, unnumbered', () => {
    const placed = new SentViews().place(job(1, null));
    expect(placed).toEqual({ job: job(1, null) });
    expect(new KnownViews().resolve(job(1, null), undefined)).toEqual(job(1, null));
  });

  it('after the host turned an activation away, the next place carries the view again', () => {
    const sent = new SentViews();
    sent.place(job(1, view('you help')));
    sent.forget();
    expect(sent.place(job(2, view('you help'))).job.plan.view).toEqual(view('you help'));
  });

  it('a host that does not know a view number answers full instead of running the activation', () => {
    const frames: unknown[] = [];
    const placed: JobData[] = [];
    const end = new ParentEnd(
      { sendBatch: (_peer, batch) => frames.push(...batch) },
      'parent-1',
      10_000,
      () => undefined,
      (_end, data) => placed.push(data),
    );
    end.deliver([crossed({ k: 'place', a: 3, job: job(3, null), view: 9 })]);
    end.flush();
    expect(placed).toEqual([]);
    expect(frames).toEqual([{ k: 'full', a: 3 }]);
  });

  it('a host that was sent the view runs the later activations that name it', () => {
    const placed: JobData[] = [];
    const end = new ParentEnd(
      { sendBatch: () => undefined },
      'parent-1',
      10_000,
      () => undefined,
      (_end, data) => placed.push(data),
    );
    const sent = new SentViews();
    for (const a of [1, 2]) {
      const { job: placedJob, view: number } = sent.place(job(a, view('you help')));
      end.deliver([crossed({ k: 'place', a, job: placedJob, view: number })]);
    }
    expect(placed.map((data) => data.plan.view)).toEqual([view('you help'), view('you help')]);
  });
});
