/** What an activation receives after setup (SPEC: the plan): read from the agent at the moment it starts. */
import type { ChatMessage } from '../models/types.js';
import type { DriverPlan } from '../wire/protocol.js';
import type { AgentCells } from '../wire/version-cell.js';
import { resolveView } from './gateway.js';
import type { Inbox } from './inbox.js';
import type { GatewayAgent } from './parent-tools.js';
import type { CurrentTurn } from './turns.js';

/** The agent as a plan reads it: its own cells and inbox besides what the gateway sees. */
export interface PlannedAgent extends GatewayAgent {
  readonly route: DriverPlan['route'];
  readonly cells: AgentCells;
  readonly inbox: Inbox;
  readonly history: readonly ChatMessage[];
}

export function planActivation(agent: PlannedAgent): DriverPlan {
  const { limits } = agent.deps;
  return {
    agentId: agent.id,
    route: agent.route,
    view: viewOrNull(agent),
    history: [...agent.history],
    ownStart: agent.init.ownStart,
    maxParallelToolCalls: limits.maxParallelToolCalls,
    maxSteps: agent.init.maxSteps,
    toolsInParent: true,
    eventsFlag: agent.deps.hub.flag,
    codeMode: agent.codeMode,
    codeBusyTimeoutMs: limits.codeBusyTimeoutMs,
    codeWallTimeoutMs: limits.codeWallTimeoutMs,
    codeLimits: limits.codeLimits,
    versions: [agent.deps.globalVersion.cell, agent.cells.view.cell],
    stepCell: agent.cells.step.cell,
    // A report already waiting makes the driver look at its first step (a recovered turn included).
    stepSeen: agent.cells.step.value - (agent.inbox.stepPending ? 1 : 0),
    // Only a governed provider costs the driver a crossing per request (createBrood limits).
    ...(agent.deps.scheduler.governsModels(agent.route.provider) ? { admission: true, ...paceOf(agent) } : {}),
  };
}

/**
 * The plan of a driver re-planned onto a healthy thread (the one it shared died because of another
 * driver), from what the parent logged. A turn in progress continues: the model request is re-issued,
 * tool calls still running in the parent are re-attached by call id.
 */
export function resumePlan(agent: PlannedAgent, turn: CurrentTurn | undefined): DriverPlan {
  const plan = planActivation(agent);
  if (turn)
    plan.resumeTurn = {
      turn: turn.turn,
      messageId: turn.messageId,
      startedCallIds: [...turn.started],
      ...(turn.lastFinish === undefined ? {} : { lastFinish: turn.lastFinish }),
      ...(turn.interrupted.size === 0 ? {} : { interruptedCallIds: [...turn.interrupted.keys()] }),
    };
  return plan;
}

/**
 * Shared memory crosses only to drivers in this process (threads): a paced provider's schedule, or
 * the cell that tells the driver its next request was admitted ahead (TurnLease.admitAhead).
 */
function paceOf(agent: PlannedAgent): { pace?: SharedArrayBuffer; credit?: SharedArrayBuffer } {
  if (agent.deps.runner.kind !== 'worker' && agent.deps.runner.kind !== 'inline') return {};
  const { scheduler } = agent.deps;
  const pace = scheduler.paceCell(agent.route.provider);
  if (pace !== undefined) return { pace };
  const credit = agent.lease?.creditCell(agent.route.provider);
  return credit === undefined ? {} : { credit };
}

/**
 * Just before the activation starts (its turn admitted, its message claimed): its first model request
 * is admitted with the plan when that costs no waiting, so it crosses nothing to ask.
 */
export function admitFirstRequest(agent: PlannedAgent, plan: DriverPlan): void {
  if (plan.admission === true && agent.lease?.admitFirstRequest(agent.route.provider) === true)
    plan.firstAdmitted = true;
}

/**
 * If the prompt cannot be assembled right now (a template error in a later turn), the plan carries
 * no view: the driver asks for it before its first request and ends that turn `error`.
 */
export function viewOrNull(agent: GatewayAgent): DriverPlan['view'] {
  try {
    return resolveView(agent);
  } catch {
    return null;
  }
}
