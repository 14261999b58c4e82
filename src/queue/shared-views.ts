/**
 * A `place` frame's plan view crosses each parent–host link once (src/wire/view-numbers.ts): later
 * `place` frames of the same view carry its number alone. A host that no longer knows a number (its
 * end of the link was made afresh, or it let the view go) answers `full`, and the activation is
 * queued as a job, which always carries its view.
 */
import { KnownViews as KnownPlanViews, SentViews as SentPlanViews } from '../wire/view-numbers.js';
import type { JobData } from './job.js';

/** The parent's side: which views this link's host was sent, by content. */
export class SentViews {
  private readonly views = new SentPlanViews();

  /** The `place` frame's job and view number: the view itself only the first time on this link. */
  place(job: JobData): { job: JobData; view?: number } {
    const { plan, view } = this.views.number(job.plan);
    if (view === undefined) return { job };
    return { job: plan === job.plan ? job : { ...job, plan }, view };
  }

  /** The host turned a placed activation away: it may have lost what it was sent, so all is sent again. */
  forget(): void {
    this.views.forget();
  }
}

/** The host's side: the views a parent sent on this link, by number (the oldest let go first). */
export class KnownViews {
  private readonly views = new KnownPlanViews();

  /** The job to run, its view filled in from its number; undefined when that view is not known here. */
  resolve(job: JobData, id: number | undefined): JobData | undefined {
    const plan = this.views.resolve(job.plan, id);
    if (plan === undefined) return undefined;
    return plan === job.plan ? job : { ...job, plan };
  }
}
