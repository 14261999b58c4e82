/** Answers `session/request_permission` by the provider's policy; the caller logs the decision. */
import type * as Acp from '@agentclientprotocol/sdk';
import { errorMessage } from '../../errors.js';
import type { AcpPermissionPolicy } from './options.js';

export interface PermissionDecision {
  decision: 'allow' | 'deny' | 'cancelled';
  optionId: string | null;
  /** Why, when the policy did not simply answer (it threw, the agent offered no matching option, the turn was cancelled). */
  note?: string;
}

export async function decidePermission(
  policy: AcpPermissionPolicy,
  request: Acp.RequestPermissionRequest,
  childId: string,
  cancelled: Promise<void>,
): Promise<PermissionDecision> {
  let wanted: 'allow' | 'deny';
  let note: string | undefined;
  if (typeof policy === 'function') {
    const asked = Promise.resolve()
      .then(() =>
        policy({
          childId,
          sessionId: request.sessionId,
          toolCall: {
            toolCallId: request.toolCall.toolCallId,
            title: request.toolCall.title ?? null,
            kind: request.toolCall.kind ?? null,
            rawInput: request.toolCall.rawInput,
          },
          options: request.options.map(({ optionId, name, kind }) => ({ optionId, name, kind })),
        }),
      )
      .then(
        (answer) => (answer === 'allow' ? 'allow' : answer === 'deny' ? 'deny' : { bad: answer }),
        (error: unknown) => ({ error: errorMessage(error) }),
      );
    const outcome = await Promise.race([asked, cancelled.then(() => 'cancelled' as const)]);
    if (outcome === 'cancelled')
      return { decision: 'cancelled', optionId: null, note: 'the turn was cancelled while the policy decided' };
    if (typeof outcome === 'object') {
      wanted = 'deny';
      note =
        'error' in outcome
          ? `the permission policy failed: ${outcome.error}`
          : `the permission policy answered ${JSON.stringify(outcome.bad) ?? String(outcome.bad)}, not 'allow' or 'deny'`;
    } else {
      wanted = outcome;
    }
  } else {
    wanted = policy;
  }
  const option = pick(request.options, wanted);
  if (!option)
    return {
      decision: 'cancelled',
      optionId: null,
      note: `the agent offered no ${wanted === 'allow' ? 'allow' : 'reject'} option${note ? `; ${note}` : ''}`,
    };
  return { decision: wanted, optionId: option.optionId, ...(note ? { note } : {}) };
}

/** A one-time answer is preferred: the policy is asked again next time. */
function pick(options: Acp.PermissionOption[], wanted: 'allow' | 'deny'): Acp.PermissionOption | undefined {
  const order = wanted === 'allow' ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
  for (const kind of order) {
    const option = options.find((candidate) => candidate.kind === kind);
    if (option) return option;
  }
  return undefined;
}

export function permissionResponse(decision: PermissionDecision): Acp.RequestPermissionResponse {
  return decision.optionId === null
    ? { outcome: { outcome: 'cancelled' } }
    : { outcome: { outcome: 'selected', optionId: decision.optionId } };
}
