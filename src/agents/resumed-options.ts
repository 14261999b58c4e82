/**
 * What a turn resumed after a crash keeps of the message it claimed: the message's own budget (a
 * run's, or what a delegation gave a child) and output schema, as its `turn/start` recorded them. The
 * per-request context is never stored: a resume gives it again.
 */
import { BroodError, errorMessage } from '../errors.js';
import { parseBudget } from '../scheduler/budget.js';
import type { Budget } from '../scheduler/types.js';
import type { JsonSchemaObject } from '../types.js';
import { isPlainObject } from '../util/plain.js';
import type { AgentImpl } from './agent.js';
import type { OpenTurn } from './open-turn.js';
import { MISSING_CHILD, MISSING_TOP_LEVEL, type StructuredTurn, structuredTurn } from './structured-turn.js';
import type { AgentInit } from './types.js';

export interface ResumedOptions {
  budget: Budget | undefined;
  /** The turn's structured_output tool, holding the last valid value the log shows it recorded. */
  structured: StructuredTurn | undefined;
}

/**
 * Checked like the host's own options (a store may have been written by hand): a recorded budget or
 * schema that is not one refuses the restore (INVALID_CONFIG) rather than resume the turn without it.
 */
export function resumedOptions(
  recorded: Pick<OpenTurn, 'budget' | 'outputSchema' | 'structured'>,
  mode: AgentInit['mode'],
): ResumedOptions {
  const budget = parseBudget(recorded.budget, 'stored turn budget');
  if (recorded.outputSchema === undefined) return { budget, structured: undefined };
  const missing = mode === 'top' ? MISSING_TOP_LEVEL : MISSING_CHILD;
  let structured: StructuredTurn;
  try {
    if (!isPlainObject(recorded.outputSchema)) throw new Error('it is not an object');
    structured = structuredTurn(recorded.outputSchema as JsonSchemaObject, missing, recorded.structured);
  } catch (error) {
    throw new BroodError('INVALID_CONFIG', `stored turn outputSchema: ${errorMessage(error)}`);
  }
  return { budget, structured };
}

/**
 * Messages accepted and never claimed, each with the options it was accepted with (and the context a
 * resume gave again): their turns run under them, as they would have.
 */
export function restoredUnclaimed<M extends { id: string; budget?: unknown; outputSchema?: unknown }>(
  messages: readonly M[],
  mode: AgentInit['mode'],
  context: unknown,
): { messages: (M & { context?: unknown; structured?: StructuredTurn })[]; budgets: Map<string, Budget> } {
  const budgets = new Map<string, Budget>();
  const restored = messages.map((message) => {
    const { budget, structured } = resumedOptions(message, mode);
    if (budget !== undefined) budgets.set(message.id, budget);
    return {
      ...message,
      ...(context === undefined ? {} : { context }),
      ...(structured === undefined ? {} : { structured }),
    };
  });
  return { messages: restored, budgets };
}

/**
 * The resumed turn's budget, before the turn starts again: a child whose parent's running turn is the
 * one that delegated it (the call that started it belongs to that turn's latest answer: the call is
 * waiting for it again) spends that turn's tokens again, and gets no more than it has left, as the
 * delegation did; otherwise the message's own budget. Its wall time counts from now.
 */
export function applyResumedBudget(
  agent: AgentImpl,
  parent: AgentImpl | undefined,
  callId: unknown,
  messageId: string,
  budget: Budget | undefined,
): void {
  const delegating =
    parent !== undefined && !parent.isDisposed && typeof callId === 'string' && parent.current?.started.has(callId);
  if (delegating) parent.governor.delegate(agent.governor, messageId, budget);
  else agent.governor.forMessage(messageId, budget);
}
