/**
 * A host's message in (agent.send, agent.run, agent.stream): the options are checked synchronously (a bad
 * one throws), the message is accepted, and a run's `result` settles with the turn that claims it.
 */
import type { Budget } from '../scheduler/types.js';
import type { RunOptions, SendOptions, TurnResult } from '../types.js';
import type { TurnGovernor } from './governor.js';
import type { Inbox } from './inbox.js';
import { abortedBefore, parseRunOptions, parseSendOptions } from './signals.js';
import { type StructuredTurn, structuredTurn } from './structured-turn.js';
import type { AgentDeps } from './types.js';

/** The agent as a message in sees it (the agent module imports this one, so no import back). */
export interface EntryAgent {
  readonly id: string;
  readonly deps: Pick<AgentDeps, 'scheduler'>;
  readonly governor: Pick<TurnGovernor, 'admissibleRun' | 'forMessage'>;
  readonly inbox: Pick<Inbox, 'result' | 'fail'>;
  accept(
    text: string,
    source: string,
    signal: AbortSignal | undefined,
    structured?: StructuredTurn,
    report?: undefined,
    context?: unknown,
    budget?: Budget,
  ): { id: string; durable: Promise<void> };
  abortMessage(messageId: string): void;
}

/** A signal that aborts before acceptance rejects ABORTED; the message (if already written) never runs. */
export async function sendMessage(agent: EntryAgent, message: string, opts: SendOptions | undefined): Promise<string> {
  const { signal } = parseSendOptions(opts);
  if (signal?.aborted) throw abortedBefore('the message was accepted');
  const accepted = agent.accept(message, 'user', signal);
  await accepted.durable;
  if (signal?.aborted) throw abortedBefore('the message was accepted');
  return accepted.id;
}

/** What run() and stream() share. */
export function startRun(
  agent: EntryAgent,
  message: string,
  opts: RunOptions | undefined,
): { messageId: string; result: Promise<TurnResult> } {
  const { signal, outputSchema, budget, context } = parseRunOptions(opts);
  const parsedBudget = agent.governor.admissibleRun(budget);
  const structured = outputSchema === undefined ? undefined : structuredTurn(outputSchema);
  const accepted = agent.accept(message, 'user', signal, structured, undefined, context, parsedBudget);
  agent.governor.forMessage(accepted.id, parsedBudget);
  // Registered before acceptance resolves, so neither the result nor an abort can be missed.
  const result = agent.inbox.result(accepted.id);
  const onAbort = (): void => agent.abortMessage(accepted.id);
  signal?.addEventListener('abort', onAbort, { once: true });
  const settled = accepted.durable
    .then(
      () => result,
      (error: unknown) => {
        agent.inbox.fail(accepted.id, error);
        return result;
      },
    )
    .finally(() => signal?.removeEventListener('abort', onAbort));
  // Started by another agent's tool call and waited for there: that agent holds no slot meanwhile.
  return { messageId: accepted.id, result: agent.deps.scheduler.waitingOnRun(agent.id, settled) };
}
