/**
 * Requests a crashed host left open. A resumed agent's interrupted turn continues without waiting for
 * them (the call's result says the decision is pending, src/agents/resumed-calls.ts), and a request
 * with no recorded decision is listed again in `pending()`: approved, the tool
 * runs once, here in the parent, its result is logged (`approval/result`) and handed to the agent as
 * a quiet message its next turn reads. A request whose decision was recorded is never asked again.
 */
import { knownEvent, type SessionEventDataMap } from '../sessions/event-types.js';
import type { SessionEvent, ToolResult } from '../types.js';
import type { ApprovalGate, GateAgent, GateOutcome } from './gate.js';

type Logged = SessionEventDataMap['approval/request'];

/** The requests of a session that no `approval/resolved` answers, in log order. */
export function openRequests(events: readonly SessionEvent[]): Logged[] {
  const open = new Map<string, Logged>();
  for (const logged of events) {
    const event = knownEvent(logged);
    if (event?.type === 'approval/request') open.set(event.data.approvalId, event.data);
    else if (event?.type === 'approval/resolved') open.delete(event.data.approvalId);
  }
  return [...open.values()];
}

/** Where a restored agent hands a late result (AgentImpl.accept, quiet delivery). */
export interface RestoredAgent extends GateAgent {
  accept(incoming: { message: string; source: string; report: { delivery: 'quiet' } }): { durable: Promise<void> };
}

export function relistOpenRequests(gate: ApprovalGate, agent: RestoredAgent, events: readonly SessionEvent[]): void {
  for (const logged of openRequests(events)) {
    const definition = agent.init.tools.find(logged.tool)?.definition;
    const request = { ...logged, agentId: agent.id, parentId: agent.parentId, depth: agent.depth };
    if (definition === undefined) {
      // The tool is gone from this runtime: nothing could run it, so the request ends here.
      gate.expireUnlisted(agent, request);
      continue;
    }
    const release = gate.armExpiry(logged.approvalId);
    gate.list({
      request,
      agent,
      definition,
      modelArgs: logged.args,
      release,
      settle: (outcome) => void runLate(agent, logged, outcome).catch(() => undefined),
    });
  }
}

async function runLate(agent: RestoredAgent, logged: Logged, outcome: GateOutcome): Promise<void> {
  // Expired by the agent's dispose: its session is being released, so nothing more is written to it.
  if (!outcome.run && agent.status === 'disposed') return;
  const result: ToolResult = outcome.run
    ? await agent.init.tools.registry.execute({
        name: logged.tool,
        arguments: outcome.args,
        callId: logged.callId,
      })
    : outcome.result;
  const { approvalId, callId, tool } = logged;
  await agent.writer.append([
    { type: 'approval/result', data: { approvalId, callId, tool, isError: result.isError, content: result.content } },
  ]);
  const text = `The call ${callId} to "${tool}", interrupted by a restart, was ${outcome.run ? 'approved and ran' : 'not run'}: ${result.content}`;
  await agent.accept({ message: text, source: 'approval', report: { delivery: 'quiet' } }).durable;
}
