/**
 * A plan's view (system prompt, tool schemas, classes) is most of a `place` frame's bytes (~2.3 KB of
 * ~3 KB for a delegated child with the built-in tools), and a fan-out's children all have the same one.
 * So each link numbers the views it has placed: the first `place` of a view carries it with its number,
 * later ones the number alone. The host keeps the views it was sent on that link; one it no longer
 * knows (its end of the link was made afresh, or it let the view go) is answered `full`, and the
 * activation is queued as a job, which always carries its view.
 */
import type { DriverView } from '../wire/protocol.js';
import type { JobData } from './job.js';

/** How many views each side keeps per link (runtimes whose views change per child stop numbering them). */
const VIEWS_KEPT = 32;

/** The parent's side: which views this link's host was sent, by content. */
export class SentViews {
  private readonly ids = new Map<string, number>();
  private nextId = 0;

  /** The `place` frame's job and view number: the view itself only the first time on this link. */
  place(job: JobData): { job: JobData; view?: number } {
    const view = job.plan.view;
    if (view === null) return { job };
    const key = JSON.stringify(view);
    const known = this.ids.get(key);
    if (known !== undefined) return { job: { ...job, plan: { ...job.plan, view: null } }, view: known };
    if (this.ids.size >= VIEWS_KEPT) this.ids.clear();
    this.nextId += 1;
    this.ids.set(key, this.nextId);
    return { job, view: this.nextId };
  }

  /** The host turned a placed activation away: it may have lost what it was sent, so all is sent again. */
  forget(): void {
    this.ids.clear();
  }
}

/** The host's side: the views a parent sent on this link, by number (the oldest let go first). */
export class KnownViews {
  private readonly views = new Map<number, DriverView>();

  /** The job to run, its view filled in from its number; undefined when that view is not known here. */
  resolve(job: JobData, id: number | undefined): JobData | undefined {
    if (id === undefined) return job;
    const view = job.plan.view;
    if (view !== null) {
      this.views.delete(id);
      this.views.set(id, view);
      if (this.views.size > VIEWS_KEPT) this.views.delete(this.views.keys().next().value as number);
      return job;
    }
    const known = this.views.get(id);
    return known === undefined ? undefined : { ...job, plan: { ...job.plan, view: known } };
  }
}
