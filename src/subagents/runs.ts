/**
 * What happens after publication: a one-shot run (one message, one turn, one result) or a continuable
 * child's activations (each busy period is a run with its own start/end events and, when it settles,
 * one notice in the parent's inbox).
 */
import type { AgentImpl } from '../agents/agent.js';
import type { StructuredTurn } from '../agents/structured-turn.js';
import type { ActivationObserver } from '../agents/types.js';
import { errorMessage } from '../errors.js';
import { publishSubagentEnd, publishSubagentStart } from '../events/subagent-events.js';
import type { TurnResult } from '../types.js';
import { onAbort } from '../util/abort-listeners.js';
import type { SubagentCore } from './core.js';
import type { SubagentResult, SubagentRun, SubagentStartRequest } from './types.js';

export async function startOneShot(
  core: SubagentCore,
  provider: string,
  child: AgentImpl,
  request: SubagentStartRequest,
  structured: StructuredTurn | undefined,
): Promise<SubagentRun> {
  const parent = core.parentOf(request.parent);
  const parentTurn = parent.current?.turn;
  const runId = core.ids('run');
  core.events.emit('start', { runId, provider, id: child.id, parentId: parent.id, depth: child.depth });
  const { hub } = core.agentDeps;
  const foreground = !hub.backgroundSignals.has(request.signal);
  publishSubagentStart(hub, parent, child.id, foreground ? 'foreground' : 'background', provider, request);
  const { prompt, signal, context, budget } = request;
  const accepted = child.accept({ message: prompt, source: 'parent', signal, structured, context, budget });
  // Budgets only tighten down the tree: the child gets at most what its parent's turn has left, and
  // its tokens are charged to that turn as they are spent.
  parent.governor.delegate(child.governor, accepted.id, request.budget);
  const turnResult = waitingOnChild(parent, child.inbox.result(accepted.id), foreground);
  const stopForwarding = onAbort(request.signal, () => child.abortMessage(accepted.id));
  let disposing: Promise<void> | undefined;
  // A job may adopt this run before it settles; only a run nobody detached rolls up into the parent's turn.
  let run: SubagentRun | undefined;
  const failed = (error: unknown): never => {
    try {
      core.events.emit('end', { runId, provider, id: child.id, stopReason: 'error' });
      publishSubagentEnd(hub, parent, child.id, 'error', undefined);
      throw error;
    } finally {
      stopForwarding();
    }
  };
  // One reaction on the child's turn (a wide fan-out holds one per running child while it waits).
  const result = turnResult.then((turn) => {
    let settled: SubagentResult;
    try {
      settled = toSubagentResult(turn);
    } catch (error) {
      return failed(error);
    }
    try {
      if (run && !core.detachedRuns.has(run) && parent.current?.turn === parentTurn)
        parent.addChildUsage(settled.usage, turn.usageTree);
      core.events.emit('end', {
        runId,
        provider,
        id: child.id,
        stopReason: settled.stopReason,
        ...(settled.output ? { output: settled.output } : {}),
      });
      publishSubagentEnd(hub, parent, child.id, settled.stopReason, settled.usage);
      return settled;
    } finally {
      stopForwarding();
    }
  }, failed);
  run = { id: child.id, result, dispose: () => (disposing ??= child.dispose()) };
  try {
    await accepted.durable;
  } catch (error) {
    child.inbox.fail(accepted.id, error);
    await run.result.catch(() => undefined);
    await run.dispose();
    throw error;
  }
  return run;
}

/**
 * A parent waiting on a foreground child does not count as running (limits.agents): its slot is free
 * until the child's result is in, then it waits for one again, deeper first, before it sees the result.
 */
function waitingOnChild(parent: AgentImpl, result: Promise<TurnResult>, foreground: boolean): Promise<TurnResult> {
  if (!foreground) return result;
  return parent.lease?.lend(result) ?? result;
}

/** The prompt's turn is the run: its structured output (the last valid call) and verdict are the turn's. */
export function toSubagentResult(turn: TurnResult): SubagentResult {
  const result: SubagentResult = { output: turn.output, stopReason: turn.stopReason, usage: turn.usage };
  if (turn.diagnostic !== undefined) result.diagnostic = turn.diagnostic;
  if ('structured' in turn) result.structured = turn.structured;
  return result;
}

const OUTCOME_LINES: Record<TurnResult['stopReason'], (id: string) => string> = {
  completed: (id) => `Background subagent ${id} finished and will do no further work unless you send it more.`,
  aborted: (id) => `Background subagent ${id} was stopped before it finished.`,
  'max-tokens': (id) => `Background subagent ${id} ran out of room before it finished.`,
  refusal: (id) => `Background subagent ${id} declined the task.`,
  error: (id) => `Background subagent ${id} failed before it finished.`,
  'max-steps': (id) => `Background subagent ${id} hit its step limit before it finished.`,
  budget: (id) => `Background subagent ${id} hit its budget before it finished.`,
};

export function settlementNotice(childId: string, last: TurnResult | undefined): string {
  const outcome = OUTCOME_LINES[last?.stopReason ?? 'completed'](childId);
  const closing = last?.output ? `Its closing message:\n${last.output}` : 'It left no closing message.';
  return `${outcome}\n${closing}`;
}

/** Each busy period of a continuable child is a run: start event, then notice to the parent, then end event. */
export function observeContinuable(core: SubagentCore, provider: string, child: AgentImpl): void {
  child.observe(new ContinuableRuns(core, provider, child));
}

/**
 * One object per continuable child, its methods on the prototype: a parked child keeps this for as
 * long as it lives, so it holds four fields rather than two closures and the scope they share.
 */
class ContinuableRuns implements ActivationObserver {
  private runId: string | undefined;

  constructor(
    private readonly core: SubagentCore,
    private readonly provider: string,
    private readonly child: AgentImpl,
  ) {}

  activationStarted(): void {
    const { core, provider, child } = this;
    this.runId = core.ids('run');
    core.events.emit('start', {
      runId: this.runId,
      provider,
      id: child.id,
      parentId: child.parentId,
      depth: child.depth,
    });
    publishSubagentStart(core.agentDeps.hub, liveParent(core, child), child.id, 'continuable', provider);
  }

  activationEnded(last: TurnResult | undefined): void {
    const { core, provider, child } = this;
    deliverNotice(core, child, last);
    const stopReason = last?.stopReason ?? 'completed';
    core.events.emit('end', {
      runId: this.runId,
      provider,
      id: child.id,
      stopReason,
      ...(last?.output ? { output: last.output } : {}),
    });
    publishSubagentEnd(core.agentDeps.hub, liveParent(core, child), child.id, stopReason, last?.usage);
  }
}

function liveParent(core: SubagentCore, child: AgentImpl): AgentImpl | undefined {
  return child.parentId === undefined ? undefined : core.agents.get(child.parentId);
}

function deliverNotice(core: SubagentCore, child: AgentImpl, last: TurnResult | undefined): void {
  const parent = child.parentId === undefined ? undefined : core.agents.get(child.parentId);
  if (!parent || parent.isDisposed || core.quietParents.has(parent)) return;
  const accepted = parent.accept({
    message: settlementNotice(child.id, last),
    source: 'subagent-settled',
    settles: { childId: child.id, turn: child.lastTurn },
  });
  accepted.durable.catch((error: unknown) =>
    core.reportBackgroundError?.(`settlement notice for ${child.id}: ${errorMessage(error)}`),
  );
}
