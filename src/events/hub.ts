/**
 * The runtime's event hub: fans host events out to subscribers (brood.events(), agent.events()).
 * With no subscriber it does nothing at all — callers check `active` before building an event, and the
 * shared `flag` cell tells drivers in other threads not to forward text deltas.
 */
import { DEFAULTS } from '../defaults.js';
import { BroodError } from '../errors.js';
import type { LogMeta } from '../sessions/session-writer.js';
import type { AgentFacts } from '../telemetry/spans.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import type { AgentEventsOptions, BroodEvent, SessionEvent } from '../types.js';
import { readUntrusted } from '../util/untrusted.js';
import { type EventOrigin, fromLogged } from './from-log.js';
import { EventStream } from './stream.js';

interface Subscription {
  stream: EventStream;
  /** undefined: every agent (brood.events()). */
  root: string | undefined;
  descendants: boolean;
  /** agentId → inside this subscription's tree (parents never change, so the answer is cached). */
  inTree: Map<string, boolean>;
  cleanup: (() => void) | undefined;
}

export class EventHub {
  /** Int32 cell read by drivers: non-zero while anyone subscribes (text deltas are worth sending). */
  readonly flag = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  /** Signals of one-shot starts made for background jobs: their `subagent-start` says 'background'. */
  readonly backgroundSignals = new WeakSet<AbortSignal>();
  private readonly subscriptions = new Map<EventStream, Subscription>();
  /** createBrood `telemetry`: sees every agent's log and child starts, subscribers or not. */
  telemetry: Telemetry | undefined;

  constructor(
    private readonly agents: ReadonlyMap<string, { readonly id: string; readonly parentId: string | undefined }>,
    readonly now: () => number,
  ) {}

  /** Only published agents produce events (not a child still being set up, not a disposed one). */
  isPublished(agent: { readonly id: string }): boolean {
    return this.agents.get(agent.id) === agent;
  }

  get active(): boolean {
    return this.subscriptions.size > 0;
  }

  /**
   * What an agent just stamped into its log: telemetry sees all of it; host events are built only
   * while somebody subscribes, and not for events written before publication (a fork's seed, a
   * restore's repair are not the agent's doing).
   */
  logged(agent: AgentFacts & EventOrigin, stamped: SessionEvent[], meta: LogMeta | undefined): void {
    this.telemetry?.logged(agent, stamped, this.isPublished(agent));
    if (!this.active || !this.isPublished(agent)) return;
    for (const event of stamped) {
      const translated = fromLogged(agent, event, meta);
      if (translated !== undefined) this.publish(translated);
    }
  }

  /** `root` undefined: the whole runtime. Throws INVALID_CONFIG for bad options. */
  subscribe(root: string | undefined, options: AgentEventsOptions | undefined): EventStream {
    const { buffer, descendants, signal } = readUntrusted('INVALID_CONFIG', 'events options', () =>
      checkOptions(options, root === undefined),
    );
    const stream = new EventStream(buffer, root ?? '', this.now, (closed) => this.unsubscribe(closed));
    if (signal?.aborted) {
      void stream.return();
      return stream;
    }
    const subscription: Subscription = { stream, root, descendants, inTree: new Map(), cleanup: undefined };
    if (signal) {
      const onAbort = (): void => void stream.return();
      signal.addEventListener('abort', onAbort, { once: true });
      subscription.cleanup = () => signal.removeEventListener('abort', onAbort);
    }
    this.subscriptions.set(stream, subscription);
    Atomics.store(this.flag, 0, 1);
    return stream;
  }

  publish(event: BroodEvent): void {
    for (const subscription of this.subscriptions.values()) {
      if (this.accepts(subscription, event.agentId)) subscription.stream.push(event);
    }
  }

  /** The agent is gone: streams rooted at it end once their queue is read. */
  agentDisposed(agentId: string): void {
    for (const subscription of [...this.subscriptions.values()]) {
      if (subscription.root === agentId) subscription.stream.end();
    }
  }

  close(): void {
    for (const subscription of [...this.subscriptions.values()]) subscription.stream.end();
  }

  private unsubscribe(stream: EventStream): void {
    const subscription = this.subscriptions.get(stream);
    if (subscription === undefined) return;
    this.subscriptions.delete(stream);
    subscription.cleanup?.();
    if (this.subscriptions.size === 0) Atomics.store(this.flag, 0, 0);
  }

  private accepts(subscription: Subscription, agentId: string): boolean {
    const { root } = subscription;
    if (root === undefined || agentId === root) return true;
    if (!subscription.descendants) return false;
    let known = subscription.inTree.get(agentId);
    if (known === undefined) {
      known = this.descendsFrom(agentId, root);
      subscription.inTree.set(agentId, known);
    }
    return known;
  }

  private descendsFrom(agentId: string, root: string): boolean {
    const seen = new Set<string>();
    const parentOf = (id: string): string | undefined => this.agents.get(id)?.parentId;
    for (let id = parentOf(agentId); id !== undefined && !seen.has(id); id = parentOf(id)) {
      if (id === root) return true;
      seen.add(id);
    }
    return false;
  }
}

function checkOptions(
  options: AgentEventsOptions | undefined,
  runtimeWide: boolean,
): { buffer: number; descendants: boolean; signal: AbortSignal | undefined } {
  if (options === undefined || options === null)
    return { buffer: DEFAULTS.eventBuffer, descendants: true, signal: undefined };
  if (typeof options !== 'object') throw invalid('events options must be an object');
  const known = runtimeWide ? ['signal', 'buffer'] : ['signal', 'buffer', 'descendants'];
  const unknown = Object.keys(options).filter((key) => !known.includes(key));
  if (unknown.length > 0)
    throw invalid(
      `unknown events option${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `'${k}'`).join(', ')}${runtimeWide ? ' (descendants is for agent.events())' : ''}`,
    );
  const { buffer = DEFAULTS.eventBuffer, descendants = true, signal } = options;
  if (typeof buffer !== 'number' || !Number.isSafeInteger(buffer) || buffer <= 0)
    throw invalid('events option buffer must be a positive safe integer');
  if (typeof descendants !== 'boolean') throw invalid('events option descendants must be a boolean');
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw invalid('events option signal must be an AbortSignal');
  return { buffer, descendants, signal };
}

function invalid(message: string): BroodError {
  return new BroodError('INVALID_CONFIG', message);
}
