/**
 * `brood acp`: a call that needs approval becomes `session/request_permission` to the client (issue
 * 35) — allow once or reject, the editor's own question. Whatever the client answers (or a failed
 * request) becomes the decision; an answer that comes after the request expired changes nothing.
 */
import type * as Acp from '@agentclientprotocol/sdk';
import type { Brood } from '../../brood.js';
import { errorMessage } from '../../errors.js';
import type { ApprovalRequestEvent } from '../../types.js';
import { toolCallId } from './replay.js';

const ALLOW = 'allow_once';
const REJECT = 'reject_once';

export const PERMISSION_OPTIONS: Acp.PermissionOption[] = [
  { optionId: ALLOW, name: 'Allow once', kind: 'allow_once' },
  { optionId: REJECT, name: 'Reject', kind: 'reject_once' },
];

export function askClient(
  brood: Brood,
  client: Acp.AgentContext,
  sessionId: string,
  event: ApprovalRequestEvent,
  log: (line: string) => void,
): void {
  const toolCall: Acp.ToolCallUpdate = {
    toolCallId: toolCallId(event.agentId, event.callId),
    title: event.tool,
    rawInput: event.args,
    status: 'pending',
  };
  void client
    .request('session/request_permission', { sessionId, toolCall, options: PERMISSION_OPTIONS })
    .then(
      ({ outcome }) =>
        outcome.outcome === 'selected' && outcome.optionId === ALLOW
          ? { approve: true as const }
          : {
              approve: false as const,
              message:
                outcome.outcome === 'cancelled' ? 'the client cancelled the request' : 'the user rejected the call',
            },
      (error: unknown) => ({ approve: false as const, message: `the client did not answer: ${errorMessage(error)}` }),
    )
    .then((decision) => brood.approvals.respond(event.approvalId, decision))
    .catch((error: unknown) => log(`brood acp: approval ${event.approvalId}: ${errorMessage(error)}`));
}
