/**
 * A host's message in (agent.send, agent.run, agent.stream): the message and the options are checked
 * synchronously (a bad one throws, before anything is written), the message is accepted, and a run's
 * `result` settles with the turn that claims it.
 */
import {
  type CheckedInput,
  type ContentPart,
  checkCarriable,
  checkInput,
  DEFAULT_MAX_INPUT_BYTES,
} from '../models/content-parts.js';
import type { ModelRoute, RunOptions, SendOptions, TurnResult } from '../types.js';
import type { IncomingMessage } from './accept.js';
import type { TurnGovernor } from './governor.js';
import type { Inbox } from './inbox.js';
import { abortedBefore, parseRunOptions, parseSendOptions } from './signals.js';
import { structuredTurn } from './structured-turn.js';
import type { AgentDeps } from './types.js';

/** The agent as a message in sees it (the agent module imports this one, so no import back). */
export interface EntryAgent {
  readonly id: string;
  readonly route: ModelRoute;
  readonly deps: Pick<AgentDeps, 'scheduler' | 'limits' | 'partFormat'>;
  readonly governor: Pick<TurnGovernor, 'admissibleRun' | 'forMessage'>;
  readonly inbox: Pick<Inbox, 'result' | 'fail'>;
  accept(incoming: IncomingMessage): { id: string; durable: Promise<void> };
  abortMessage(messageId: string): void;
}

/** A signal that aborts before acceptance rejects ABORTED; the message (if already written) never runs. */
export async function sendMessage(
  agent: EntryAgent,
  message: string | ContentPart[],
  opts: SendOptions | undefined,
): Promise<string> {
  const { signal } = parseSendOptions(opts);
  const input = checkedInput(agent, message);
  if (signal?.aborted) throw abortedBefore('the message was accepted');
  const accepted = agent.accept({ message: input, source: 'user', signal });
  await accepted.durable;
  if (signal?.aborted) throw abortedBefore('the message was accepted');
  return accepted.id;
}

/** What run() and stream() share. */
export function startRun(
  agent: EntryAgent,
  message: string | ContentPart[],
  opts: RunOptions | undefined,
): { messageId: string; result: Promise<TurnResult> } {
  const input = checkedInput(agent, message);
  const { signal, outputSchema, budget, context } = parseRunOptions(opts);
  const parsedBudget = agent.governor.admissibleRun(budget);
  const structured = outputSchema === undefined ? undefined : structuredTurn(outputSchema);
  const accepted = agent.accept({ message: input, source: 'user', signal, structured, context, budget: parsedBudget });
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

/**
 * The host's message as brood keeps it: INVALID_ARGS for a malformed part, one over maxInputBytes, or
 * one the agent's provider format cannot carry (its media type named).
 */
function checkedInput(agent: EntryAgent, message: string | ContentPart[]): CheckedInput {
  const input = checkInput(message, agent.deps.limits.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES);
  const format = agent.deps.partFormat?.(agent.route.provider);
  if (format !== undefined) checkCarriable(input.parts, format);
  return input;
}
