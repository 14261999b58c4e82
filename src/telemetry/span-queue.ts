/**
 * Span building waits until the events that arrived together have been answered: the parent's main
 * thread answers its drivers first (claims, tool results, the next request's go-ahead) and builds the
 * spans of the burst right after, from the same stamps (a span's times are the logged ones, not the
 * time it is built). What must see an agent's spans now builds that agent's share of the queue first:
 * its turn's end (its spans end before `turn-end` is emitted and before its run() resolves), the
 * propagation of its turn's context, its disposal.
 *
 * An agent's spans depend only on its ancestors' (a child's turn nests under its parent's call), so
 * building one agent's share takes what is queued for it and its ancestors, in arrival order, and
 * leaves the rest of the burst queued. A child's start is queued with its parent's spans, since it
 * reads them.
 */
import type { SessionEvent } from '../types.js';
import type { AgentFacts } from './spans.js';

/** One logged batch, or parent-side work that reads the spans built so far (a child's start). */
interface Pending {
  readonly seq: number;
  /** A logged batch: whose, and the events. */
  readonly agent: AgentFacts | undefined;
  readonly stamped: readonly SessionEvent[] | undefined;
  readonly step: (() => void) | undefined;
  done: boolean;
}

export class SpanQueue {
  /** Everything queued, in arrival order (items built early are marked done and skipped). */
  private pending: Pending[] = [];
  /** The same items by the agent whose spans they touch, in arrival order. */
  private readonly byAgent = new Map<string, Pending[]>();
  private seq = 0;
  private scheduled: NodeJS.Immediate | undefined;
  /** agent id → parent id, for the ancestry a partial build takes along. */
  private readonly parents = new Map<string, string | undefined>();

  constructor(
    private readonly build: (agent: AgentFacts, stamped: readonly SessionEvent[]) => void,
    /** A step threw (a tracer or exporter failed): reported, and the next step still runs. */
    private readonly failed: (error: unknown) => void,
  ) {}

  /** A logged batch: built now when it ends a turn, otherwise once the current burst is answered. */
  logged(agent: AgentFacts, stamped: readonly SessionEvent[]): void {
    this.parents.set(agent.id, agent.parentId);
    this.push(agent.id, agent, stamped, undefined);
    if (endsTurn(stamped)) this.buildFor(agent.id);
    else this.schedule();
  }

  /**
   * Work queued in order with the spans of agent `ownerId`: a child's start goes with its parent's (it reads the
   * call that started it), a host message with its agent's.
   */
  later(ownerId: string, step: () => void): void {
    this.push(ownerId, undefined, undefined, step);
    this.schedule();
  }

  /** Builds what is queued for `agentId` and its ancestors, in arrival order. */
  buildFor(agentId: string): void {
    const lanes: Pending[][] = [];
    for (const id of this.ancestry(agentId)) {
      const lane = this.byAgent.get(id);
      if (lane === undefined) continue;
      this.byAgent.delete(id);
      lanes.push(lane);
    }
    if (lanes.length === 1) for (const item of lanes[0] as Pending[]) this.run(item);
    else if (lanes.length === 2) this.runMerged(lanes[0] as Pending[], lanes[1] as Pending[]);
    else if (lanes.length > 2) for (const item of lanes.flat().sort(bySeq)) this.run(item);
  }

  /** Builds everything queued, in arrival order. */
  drain(): void {
    if (this.scheduled !== undefined) {
      clearImmediate(this.scheduled);
      this.scheduled = undefined;
    }
    const queued = this.pending;
    this.pending = [];
    this.byAgent.clear();
    for (const item of queued) this.run(item);
  }

  /** The agent is gone: its ancestry entry with it. */
  forget(agentId: string): void {
    this.parents.delete(agentId);
  }

  private push(owner: string, agent: Pending['agent'], stamped: Pending['stamped'], step: Pending['step']): void {
    const item: Pending = { seq: this.seq++, agent, stamped, step, done: false };
    this.pending.push(item);
    const lane = this.byAgent.get(owner);
    if (lane === undefined) this.byAgent.set(owner, [item]);
    else lane.push(item);
  }

  private run(item: Pending): void {
    if (item.done) return;
    item.done = true;
    try {
      if (item.step !== undefined) item.step();
      else if (item.agent !== undefined && item.stamped !== undefined) this.build(item.agent, item.stamped);
    } catch (error) {
      this.failed(error);
    }
  }

  /** Two lanes in arrival order (an agent and its parent: the common case) without sorting. */
  private runMerged(a: Pending[], b: Pending[]): void {
    let i = 0;
    let j = 0;
    while (i < a.length || j < b.length) {
      const next = j >= b.length || (i < a.length && (a[i] as Pending).seq < (b[j] as Pending).seq) ? a[i++] : b[j++];
      this.run(next as Pending);
    }
  }

  private ancestry(agentId: string): string[] {
    const chain: string[] = [];
    for (let id: string | undefined = agentId; id !== undefined && !chain.includes(id); id = this.parents.get(id))
      chain.push(id);
    return chain;
  }

  private schedule(): void {
    if (this.scheduled === undefined) this.scheduled = setImmediate(() => this.drain());
  }
}

const bySeq = (a: Pending, b: Pending): number => a.seq - b.seq;

function endsTurn(stamped: readonly SessionEvent[]): boolean {
  for (const event of stamped) if (event.type === 'turn/end') return true;
  return false;
}
