/**
 * Served continuable children: with a delegation whose background mode is 'continuable', `delegate`
 * starts a continuable child and answers with its first turn's output and its `child_id`; `continue`
 * sends it the next message and answers with that turn's output. Each child keeps the parent agent
 * made for its `delegate` call until the server closes (ServedDelegations disposes it then). That parent
 * never calls a model: the runtime delivers it no settlement notice (pluginAccess.quietParent), the
 * served call waits on the child's run instead.
 */
import type { Brood } from '../../brood.js';
import type { ContinuableValue, DelegationDeps } from '../../delegation/routes.js';
import { runDelegation } from '../../delegation/routes.js';
import { subagentsOf } from '../../delegation/shared.js';
import { BroodError } from '../../errors.js';
import { pluginAccess } from '../../runtime/plugin-access.js';
import type { Agent, StopReason } from '../../types.js';

export interface ContinuableOutcome {
  childId: string;
  stopReason: StopReason;
  output: string;
}

interface RunEnd {
  id: string;
  stopReason: StopReason;
  output?: string;
}

export class ServedContinuables {
  /** Each served child's parent. */
  readonly #parents = new Map<string, Agent>();

  constructor(
    private readonly brood: Brood,
    private readonly deps: DelegationDeps,
  ) {}

  /** Starts a continuable child under `parent` (which this object now keeps) and waits for its first run. */
  async start(parent: Agent, toolArgs: Record<string, unknown>, signal: AbortSignal): Promise<ContinuableOutcome> {
    pluginAccess(this.brood).quietParent(parent);
    let childId: string | undefined;
    const ended = this.#nextEnd(() => childId, signal);
    const result = await runDelegation(
      this.deps,
      { ...toolArgs, run_in_background: true },
      {
        callId: `mcp-${parent.id}`,
        agent: parent,
        signal,
      },
    ).catch((error: unknown) => {
      ended.cancel();
      throw error;
    });
    childId = (result as { value: ContinuableValue }).value.subagentId;
    this.#parents.set(childId, parent);
    ended.idKnown();
    return outcome(childId, await ended.promise);
  }

  /** The next message to a served child; resolves with the turn it starts. */
  async continue(childId: string, message: string, signal: AbortSignal): Promise<ContinuableOutcome> {
    const parent = this.#parents.get(childId);
    if (parent === undefined) {
      throw new BroodError('NOT_RESUMABLE', `no continuable child ${childId} was started through this server`, {
        details: { childId },
      });
    }
    const ended = this.#nextEnd(() => childId, signal);
    try {
      await subagentsOf(this.brood).followup(parent, childId, message, { signal });
    } catch (error) {
      ended.cancel();
      throw error;
    }
    return outcome(childId, await ended.promise);
  }

  /**
   * The end of the next run of the child `id()` names. Listening starts before the start call, when
   * the id is not known yet: ends heard meanwhile are kept, and `idKnown()` looks among them (a fast
   * child's first run may end before its start call has returned).
   */
  #nextEnd(
    id: () => string | undefined,
    signal: AbortSignal,
  ): { promise: Promise<RunEnd>; cancel(): void; idKnown(): void } {
    let off: () => void = () => undefined;
    let settle: (end: RunEnd) => void = () => undefined;
    const early: RunEnd[] = [];
    const promise = new Promise<RunEnd>((resolve, reject) => {
      settle = (end) => {
        off();
        resolve(end);
      };
      const stop = subagentsOf(this.brood).on('end', (info: RunEnd) => {
        const wanted = id();
        if (wanted === undefined) early.push(info);
        else if (info.id === wanted) settle(info);
      });
      const aborted = () => {
        off();
        reject(signal.reason ?? new BroodError('ABORTED', 'the call was cancelled'));
      };
      off = () => {
        stop();
        signal.removeEventListener('abort', aborted);
      };
      if (signal.aborted) aborted();
      else signal.addEventListener('abort', aborted, { once: true });
    });
    const idKnown = () => {
      const hit = early.find((end) => end.id === id());
      if (hit !== undefined) settle(hit);
      early.length = 0;
    };
    return { promise, cancel: () => off(), idKnown };
  }
}

function outcome(childId: string, end: RunEnd): ContinuableOutcome {
  return { childId, stopReason: end.stopReason, output: end.output ?? '' };
}
