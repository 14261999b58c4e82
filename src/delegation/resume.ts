/**
 * A delegation call a crash interrupted (its `tool/call` logged, no result): the child it started is
 * found by the call id its descriptor records. A foreground child interrupted mid-turn is resumed in
 * its own session and the call waits for it; one that finished gives its logged result; a
 * background child is resumed and the call answers as its first run did. No child: the call never
 * started one, and starts it now.
 */
import type { AgentImpl } from '../agents/agent.js';
import { openTurnOf } from '../agents/open-turn.js';
import { emptyTurnResult, endedResultOf, pendingResultOf } from '../agents/recovered-turn.js';
import type { Brood } from '../brood.js';
import { pluginAccess } from '../runtime/plugin-access.js';
import { childOfCall, subagentDescriptorOf } from '../sessions/child-index.js';
import { toSubagentResult } from '../subagents/runs.js';
import type { SubagentResult } from '../subagents/types.js';
import type { Agent, SessionEvent, TurnResult } from '../types.js';

export interface InterruptedChild {
  id: string;
  continuable: boolean;
  /** The child's outcome: a foreground call waits for it, a background job is built on it. */
  result: Promise<SubagentResult>;
  cancel(): void;
  dispose(): Promise<void>;
}

export async function interruptedChild(
  brood: Brood,
  parent: Agent,
  callId: string,
  background: boolean,
  context?: unknown,
): Promise<InterruptedChild | undefined> {
  const childId = await childOfCall(brood.sessions, parent.id, callId);
  if (childId === undefined) return undefined;
  const { events } = await brood.sessions.read(childId);
  const continuable = subagentDescriptorOf(events)?.mode === 'continuable';
  const logged = endedResultOf(events);
  const parentImpl = pluginAccess(brood).agentImpl(parent);
  if (logged !== undefined && !continuable && openTurnOf(events) === undefined) {
    if (!background) parentImpl?.addChildUsage(logged.usage);
    const done = { cancel: () => undefined, dispose: () => Promise.resolve() };
    return { id: childId, continuable, result: Promise.resolve(toSubagentResult(logged)), ...done };
  }
  // The resumed child's turns serve this call again: they read its per-request context.
  const child = (await brood.resumeAgent(childId, context === undefined ? {} : { context })) as AgentImpl;
  const result = continuable ? Promise.resolve(logged ?? emptyTurnResult('completed')) : resultOf(child, events);
  // A parent waiting on its foreground child holds no turn slot meanwhile (limits.agents), as on a first run.
  const waited =
    background || continuable || parentImpl === undefined ? result : (parentImpl.lease?.lend(result) ?? result);
  const settled = waited.then(async (turn) => {
    // A foreground run rolls up into the parent's turn and its child is disposed once it is done
    // (a background job's run is disposed by its job).
    if (!continuable && !background) {
      parentImpl?.addChildUsage(turn.usage, turn.usageTree);
      await child.dispose().catch(() => undefined);
    }
    return toSubagentResult(turn);
  });
  const cancel = (): void => {
    if (!child.isDisposed) child.cancel('parent');
  };
  return { id: childId, continuable, result: settled, cancel, dispose: () => child.dispose() };
}

/** The resumed turn's result, or the result of the prompt the child never got to (it runs now). */
function resultOf(child: AgentImpl, events: SessionEvent[]): Promise<TurnResult> {
  return (
    pendingResultOf(child, events) ??
    Promise.resolve({ ...emptyTurnResult('error'), diagnostic: 'the child had no turn to resume' })
  );
}
