/**
 * A plan's view (system prompt, tool schemas, classes) is most of its bytes (~2.4 KB of a ~2.9 KB
 * plan for a delegated child with the built-in tools), and a fan-out's children all have the same
 * one. So each link numbers the views it has sent: the first plan that carries a view carries its
 * number too, later ones the number alone (their view null). The receiving side keeps the views by
 * number, so a thread's drivers with the same view share one copy instead of each holding its own.
 *
 * Both sides keep the last VIEWS_KEPT numbers. The sender only names numbers it holds, all given since
 * it last let them go, and numbers only grow, so whatever it names is among the receiver's last ones
 * on an ordered link; a receiver that lost them (a queue host's end of its link made afresh) says so.
 */
import type { DriverView } from './protocol.js';

/** A plan as either kind of link carries it (a thread's DriverPlan, a queue job's RemotePlan). */
interface Planned {
  view: DriverView | null;
}

/** How many views each side keeps per link (runtimes whose views change per child stop sharing them). */
const VIEWS_KEPT = 32;

/** The sending side: which views this link's other end was sent, by content. */
export class SentViews {
  private readonly ids = new Map<string, number>();
  private nextId = 0;

  /** The plan as it crosses and its view's number: the view itself only the first time on this link. */
  number<P extends Planned>(plan: P): { plan: P; view?: number } {
    const { view } = plan;
    if (view === null) return { plan };
    const key = viewKey(view);
    const known = this.ids.get(key);
    if (known !== undefined) return { plan: { ...plan, view: null }, view: known };
    if (this.ids.size >= VIEWS_KEPT) this.ids.clear();
    this.nextId += 1;
    this.ids.set(key, this.nextId);
    return { plan, view: this.nextId };
  }

  /** The other end may have lost what it was sent: everything is sent again. */
  forget(): void {
    this.ids.clear();
  }
}

/**
 * A view's content as a string: its system prompt's number, its classes, then each schema as a part.
 * A schema's content gets a number the first time a frozen schema with it is seen (the tool resolver
 * shares one frozen schema among agents for a tool with no per-agent presentation), kept per object: a
 * fan-out's children neither serialise the same ~2 KB of schemas again nor build and hash a key that
 * long. Any other schema is its JSON, or the number of a frozen one with the same JSON. The system
 * prompt, the same text in every child of a fan-out but a new string in each, is numbered by its
 * text (a lookup hashes it; its JSON would copy it). Equal keys mean equal views: a number is given to
 * one content only (numbers only grow), JSON text never holds a raw newline nor starts with `#`.
 */
const frozenIds = new WeakMap<object, number>();
/**
 * The contents numbered, at most IDS_KEPT of each kind, forgotten all at once when full (a runtime
 * whose tools or prompts churn lets old ones go). A content seen again after that gets a new number:
 * its views are then keyed apart from older ones, never together with different content.
 */
const idsByJson = new Map<string, number>();
const idsBySystem = new Map<string, number>();
const IDS_KEPT = 256;
let lastId = 0;

function viewKey(view: DriverView): string {
  // A malformed plan is numbered by its JSON as it is: the other side answers it (INTERNAL), not this one.
  if (typeof view !== 'object' || !Array.isArray(view.tools) || typeof view.system !== 'string') {
    return JSON.stringify(view);
  }
  let key = `#${numbered(idsBySystem, view.system)}\n${JSON.stringify(view.classes)}`;
  for (const tool of view.tools) key += `\n${schemaPart(tool)}`;
  return key;
}

function schemaPart(tool: object): string {
  // Only a frozen schema is known not to change under its number.
  if (Object.isFrozen(tool)) {
    let id = frozenIds.get(tool);
    if (id === undefined) {
      id = numbered(idsByJson, JSON.stringify(tool));
      frozenIds.set(tool, id);
    }
    return `#${id}`;
  }
  const json = JSON.stringify(tool);
  const id = idsByJson.get(json);
  return id === undefined ? json : `#${id}`;
}

function numbered(ids: Map<string, number>, content: string): number {
  let id = ids.get(content);
  if (id === undefined) {
    if (ids.size >= IDS_KEPT) ids.clear();
    lastId += 1;
    id = lastId;
    ids.set(content, id);
  }
  return id;
}

/** The receiving side: the views sent on this link, by number (the oldest let go first). */
export class KnownViews {
  private readonly views = new Map<number, DriverView>();

  /** The plan with its view filled in from its number; undefined when that view is not known here. */
  resolve<P extends Planned>(plan: P, id: number | undefined): P | undefined {
    if (id === undefined) return plan;
    const { view } = plan;
    if (view !== null) {
      this.views.delete(id);
      this.views.set(id, view);
      if (this.views.size > VIEWS_KEPT) this.views.delete(this.views.keys().next().value as number);
      return plan;
    }
    const known = this.views.get(id);
    return known === undefined ? undefined : { ...plan, view: known };
  }
}
