/**
 * What a call of a turn resumed after a crash does when the resumed driver issues it again. Its
 * result was not logged (a logged one is in the history and never issued again). If its `tool/call`
 * was not logged either, it never ran: it runs normally. If it was, its outcome is unknown: an
 * `idempotent` tool runs again, a self-resuming tool (delegation) picks up what it started, a call
 * still waiting for approval stays with the host, and any other tool is not run: the model is told.
 */

import { RUN_CODE_TOOL_NAME } from '../tools/code-mode-sdk.js';
import { isSelfResuming, markInterrupted } from '../tools/interrupted.js';
import type { ToolResult } from '../types.js';
import type { InterruptedCall } from './open-turn.js';
import type { CurrentTurn } from './turns.js';
import type { AgentInit } from './types.js';

/** The marker a tool result carries when a crash left its call's outcome unknown (docs/errors.md). */
export const TOOL_OUTCOME_UNKNOWN = 'TOOL_OUTCOME_UNKNOWN';

export type ResumeDecision = 'rerun' | 'resume' | 'unknown' | 'approval';

/** Decided from the live registry: an unregistered tool runs "normally", which answers UNKNOWN_TOOL naming it. */
export function decideInterrupted(
  agent: { readonly init: AgentInit },
  call: InterruptedCall,
  awaitingApproval: boolean,
): ResumeDecision {
  if (awaitingApproval) return 'approval';
  if (call.name === RUN_CODE_TOOL_NAME) return 'unknown';
  const definition = agent.init.tools.find(call.name)?.definition;
  if (definition === undefined || definition.idempotent === true) return 'rerun';
  return isSelfResuming(definition) ? 'resume' : 'unknown';
}

/**
 * The result of an interrupted call that must not run, or undefined when the call runs (normally,
 * again, or marked so a self-resuming tool finds what it started). Each interrupted call is taken once.
 */
export function interruptedResult(
  agent: { readonly init: AgentInit },
  turn: CurrentTurn,
  callId: string,
  name: string,
): ToolResult | undefined {
  const interrupted = turn.interrupted.get(callId);
  if (interrupted === undefined) return undefined;
  turn.interrupted.delete(callId);
  switch (decideInterrupted(agent, { ...interrupted, name }, turn.awaitingApproval.has(callId))) {
    case 'rerun':
      return undefined;
    case 'resume':
      markInterrupted(agent, callId);
      return undefined;
    case 'approval':
      return notRunResult(
        `the call to ${name} was waiting for approval when the host restarted; it is still pending, and once decided its result arrives as a message`,
      );
    case 'unknown':
      return notRunResult(
        `${TOOL_OUTCOME_UNKNOWN}: the call to ${name} was interrupted by a restart and may or may not have taken effect; it was not run again`,
      );
  }
}

function notRunResult(message: string): ToolResult {
  return { isError: true, content: `Error: ${message}`, error: { message } };
}
