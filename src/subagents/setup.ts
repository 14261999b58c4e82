/**
 * Unpublished child setup (SPEC §9): depth, route, persona, restriction and the
 * provider's own hook all happen privately; only when every step succeeded is the session committed,
 * the agent registered and the child published. A failure rolls back everything it did.
 */

import type { AgentImpl } from '../agents/agent.js';
import { composeAgent } from '../agents/factory.js';
import { rebuildSession } from '../agents/history.js';
import { childDepthFor } from '../depth.js';
import { BroodError } from '../errors.js';
import { resolveChildRoute } from '../models/route.js';
import { isQueueRunnerConfig } from '../queue/config.js';
import {
  type ForeignEvent,
  modelSelectionEvents,
  type NewEventOf,
  type SubagentDescriptorData,
} from '../sessions/event-types.js';
import type { SessionHeader } from '../types.js';
import { isPlainObject } from '../util/plain.js';
import type { SubagentCore } from './core.js';
import { delegatingCallOf } from './delegating-call.js';
import { externalDriverOf } from './external.js';
import type { CreateChildOptions, ReportDelivery } from './types.js';

export interface ChildSpec extends CreateChildOptions {
  provider: string;
  mode: 'one-shot' | 'continuable';
  childId?: string;
  /** A continuable child's default report delivery (recorded in its descriptor). */
  reportDelivery?: ReportDelivery;
  /** A continuable child's report size cap, when its start gave one (recorded in its descriptor). */
  maxReportBytes?: number;
  /** brood's own additions to the composed child (a continuable child's `report`); throwing rolls back. */
  install?: (child: AgentImpl) => void;
}

export async function publishChild(core: SubagentCore, spec: ChildSpec): Promise<AgentImpl> {
  const { request } = spec;
  const parent = core.parentOf(request.parent);
  const depth = childDepthFor(parent.depth, request.maxDepth);
  const route = core.catalog.resolve(resolveChildRoute(request.agentOptions, parent.lastRequestRoute ?? parent.route));
  const seed = validateSeed(spec.seed);
  const seeded = rebuildSession(seed.map((event, seq) => ({ seq, time: 0, ...event })));
  const id = spec.childId ?? core.ids('sub');
  const runnerKind = spec.runner ?? core.defaultRunnerKind;
  const external = externalDriverOf(spec);
  const { agent, rollback } = composeAgent(core, {
    id,
    depth,
    parentId: parent.id,
    route,
    codeMode: core.agentDeps.limits.codeMode, // children use the deployment's mode: scopes are flat
    mode: spec.mode,
    modelSelectionEnabled: parent.modelSelectionEnabled,
    validateFilter: true,
    ...(external
      ? { runner: external.runner }
      : runnerKind === 'inline'
        ? { runner: core.inlineRunner }
        : isQueueRunnerConfig(runnerKind)
          ? { runner: core.queueRunner(runnerKind) }
          : {}),
    ...(request.persona === undefined ? {} : { persona: request.persona }),
    ...(request.toolFilter === undefined ? {} : { toolFilter: request.toolFilter }),
    ...(request.maxSteps === undefined ? {} : { maxSteps: request.maxSteps }),
    // A continuable child's ceiling holds for every turn it takes (a one-shot child's, for its one run).
    ...(spec.mode === 'continuable' && request.budget !== undefined ? { budget: request.budget } : {}),
    ...(request.label === undefined ? {} : { label: request.label }),
    ...(spec.setup ? { setup: spec.setup } : {}),
    session: {
      nextSeq: 0,
      history: seeded.history,
      ownStart: seeded.history.length,
      lastTurn: seeded.lastTurn,
      unclaimed: [],
      lastRequestRoute: undefined,
    },
  });
  const header: SessionHeader = {
    id,
    createdAt: core.agentDeps.now(),
    parentSession: parent.id,
    origin: 'subagent',
    delegationDepth: depth,
    model: route,
  };
  if (seed.length > 0) header.seedLength = seed.length;
  const approvals = core.agentDeps.approvals.ruleForChild(id, parent.id, request.approvals);
  try {
    spec.install?.(agent);
    await core.store.create(header);
    await core.store.acquire?.(id);
  } catch (error) {
    rollback();
    core.agentDeps.approvals.forget(id);
    throw error;
  }
  // The seed first (a provider's events, logged as they are), then what brood knows about the child.
  agent.writer.appendForeign(seed);
  agent.writer.append([
    descriptorEvent(
      spec,
      route,
      approvals,
      external
        ? { runner: 'external', ...external.descriptor }
        : runnerKind === 'inline'
          ? { runner: 'inline' }
          : isQueueRunnerConfig(runnerKind)
            ? { runner: 'queue' }
            : {},
    ),
    ...modelSelectionEvents(parent.modelSelectionEnabled),
  ]);
  core.agents.set(id, agent);
  return agent;
}

function descriptorEvent(
  spec: ChildSpec,
  route: SessionHeader['model'],
  approvals: 'deny' | 'ask' | undefined,
  runner: Pick<SubagentDescriptorData, 'runner'> & Record<string, unknown>,
): NewEventOf<'subagent/descriptor'> {
  const { request } = spec;
  const data: SubagentDescriptorData = { provider: spec.provider, mode: spec.mode, model: route, ...runner };
  if (request.label !== undefined) data.label = request.label;
  if (request.persona !== undefined) data.persona = request.persona;
  if (request.toolFilter !== undefined) data.toolFilter = request.toolFilter;
  if (request.maxSteps !== undefined) data.maxSteps = request.maxSteps;
  if (spec.reportDelivery !== undefined) data.reportDelivery = spec.reportDelivery;
  if (spec.maxReportBytes !== undefined) data.maxReportBytes = spec.maxReportBytes;
  if (spec.mode === 'continuable' && request.budget !== undefined) data.budget = { ...request.budget };
  if (approvals !== undefined) data.approvals = approvals;
  const callId = delegatingCallOf(request);
  if (callId !== undefined) data.callId = callId;
  return { type: 'subagent/descriptor', data };
}

/** Seeds come from providers (possibly third-party): each must look like a session event. */
function validateSeed(seed: unknown[] | undefined): ForeignEvent[] {
  if (seed === undefined) return [];
  if (!Array.isArray(seed)) throw new BroodError('INVALID_CONFIG', 'a child seed must be an array of session events');
  return seed.map((event, index) => {
    if (!isPlainObject(event) || typeof event.type !== 'string' || !isPlainObject(event.data)) {
      throw new BroodError('INVALID_CONFIG', `seed event ${index} is not a session event ({ type, data })`);
    }
    return { type: event.type, data: event.data };
  });
}
