/**
 * Rebuilds a live agent from its session (brood.resumeAgent, a continuable child's next followup,
 * a cold start after a crash): depth from the header (never lowered), composition from the
 * descriptor, history and unclaimed inbox from the events; a turn a crash left open continues
 * (src/agents/recovered-turn.ts).
 */

import { openRequests, relistOpenRequests } from '../approvals/restored.js';
import { validateDelegationDepth } from '../depth.js';
import { BroodError, errorMessage } from '../errors.js';
import { parseBudget } from '../scheduler/budget.js';
import type { AgentDescriptorData, SubagentDescriptorData } from '../sessions/event-types.js';
import type { CodeMode, ModelRoute, SessionEvent, SessionHeader, ToolFilter } from '../types.js';
import type { DriverRunner } from '../wire/runner.js';
import type { AgentImpl } from './agent.js';
import { composeAgent } from './factory.js';
import { finishedChildren } from './finished-children.js';
import { rebuildSession } from './history.js';
import { type OpenTurn, openTurnOf } from './open-turn.js';
import { continueInterrupted } from './recovered-turn.js';
import { applyResumedBudget, restoredUnclaimed, resumedOptions } from './resumed-options.js';
import type { RuntimeCore } from './runtime-core.js';
import type { AgentInit } from './types.js';

/** Either descriptor, every field optional (a top-level agent's has no provider, a child's no codeMode). */
type DescriptorFields = Partial<AgentDescriptorData> & Partial<SubagentDescriptorData>;

export interface RestoreOptions {
  model?: ModelRoute;
  depth?: number;
  /** Checked before anything is composed and again before publication (nothing is kept when it fired). */
  signal?: AbortSignal;
  /**
   * The per-request context of the turns the restore runs (the one a crash left open, the messages no
   * turn took): never stored, so a resume gives it again.
   */
  context?: unknown;
}

/**
 * What the runtime decides for a restored agent, handed down (restore never calls back up into the
 * runtime): which runner drives it, and what attaches it once rebuilt (continuable children re-attach
 * to their delegation).
 */
export interface RestoreHooks {
  /** The runner its descriptor names (inline, external, a queue), or undefined for the runtime's own. */
  runnerFor(sessionId: string, descriptor: Record<string, unknown>): DriverRunner | undefined;
  /** Called after the agent is rebuilt and published, before it wakes. */
  restored(agent: AgentImpl, descriptor: Record<string, unknown>): void;
  /**
   * Reads what the agent's log refers to before it is rebuilt (the jobs it announced); what it returns
   * runs right after `restored`, before the agent takes any turn.
   */
  prepare?(
    sessionId: string,
    events: readonly SessionEvent[],
    context: unknown,
  ): Promise<((agent: AgentImpl) => void) | undefined>;
}

/** Restores in flight per runtime: concurrent resumes of one session share one restore (and one lock). */
const restoring = new WeakMap<RuntimeCore, Map<string, Promise<AgentImpl>>>();

export function restoreAgent(
  core: RuntimeCore,
  hooks: RestoreHooks,
  sessionId: string,
  options: RestoreOptions = {},
): Promise<AgentImpl> {
  const live = core.agents.get(sessionId);
  if (live) return Promise.resolve(live);
  let inFlight = restoring.get(core);
  if (inFlight === undefined) {
    inFlight = new Map();
    restoring.set(core, inFlight);
  }
  const pending = inFlight.get(sessionId);
  if (pending) return pending;
  const table = inFlight;
  const restore = restoreOwned(core, hooks, sessionId, options).finally(() => table.delete(sessionId));
  table.set(sessionId, restore);
  return restore;
}

/** Takes the session's write lock first, so what is read is what this runtime then appends to. */
async function restoreOwned(
  core: RuntimeCore,
  hooks: RestoreHooks,
  sessionId: string,
  options: RestoreOptions,
): Promise<AgentImpl> {
  await core.store.acquire?.(sessionId);
  try {
    return await rebuildAgent(core, hooks, sessionId, options);
  } catch (error) {
    await core.store.release?.(sessionId).catch(() => undefined);
    throw error;
  }
}

async function rebuildAgent(
  core: RuntimeCore,
  hooks: RestoreHooks,
  sessionId: string,
  options: RestoreOptions,
): Promise<AgentImpl> {
  const { header, events } = await core.store.read(sessionId);
  const prepared = await hooks.prepare?.(sessionId, events, options.context);
  throwIfAborted(options.signal);
  const rebuilt = rebuildSession(events, { keepOpenTurn: true });
  const open = openTurnOf(events);
  const runtimeDepth = options.depth === undefined ? 0 : validateDelegationDepth(options.depth);
  const depth = Math.max(header.delegationDepth, runtimeDepth);
  const route =
    options.model === undefined
      ? await resolveLoggedRoute(core, sessionId, rebuilt.lastRoute ?? header.model, open, events)
      : core.catalog.resolve(options.model);
  // Each field is still checked: a descriptor is the one event a host may have written by hand.
  const descriptor: DescriptorFields = rebuilt.descriptor ?? {};
  // A limit is never dropped: a stored budget that is not one refuses the restore (INVALID_CONFIG).
  const budget = parseBudget(descriptor.budget, 'stored subagent descriptor budget');
  const mode = modeOf(header, descriptor);
  const resumed = open === undefined ? undefined : resumedOptions(open, mode);
  const unclaimed = restoredUnclaimed(rebuilt.unclaimed, mode, options.context);
  const { agent, rollback } = composeAgent(core, {
    id: sessionId,
    depth,
    parentId: header.parentSession,
    route,
    codeMode: isCodeMode(descriptor.codeMode) ? descriptor.codeMode : core.agentDeps.limits.codeMode,
    // A resumed agent keeps the step limit it was created with (SPEC §15).
    ...(isMaxSteps(descriptor.maxSteps) ? { maxSteps: descriptor.maxSteps } : {}),
    ...(budget === undefined ? {} : { budget }),
    mode,
    modelSelectionEnabled: rebuilt.modelSelectionEnabled,
    validateFilter: false,
    ...withRunner(hooks.runnerFor(sessionId, descriptor)),
    ...(typeof descriptor.persona === 'string' ? { persona: descriptor.persona } : {}),
    ...(typeof descriptor.label === 'string' ? { label: descriptor.label } : {}),
    ...(isToolFilter(descriptor.toolFilter) ? { toolFilter: descriptor.toolFilter } : {}),
    session: {
      nextSeq: events.length,
      history: rebuilt.history,
      ownStart: ownStartOf(events, header, rebuilt.givenMessages),
      lastTurn: rebuilt.lastTurn,
      unclaimed: unclaimed.messages,
      // An explicit resume route replaces the logged one for children too.
      lastRequestRoute: options.model ? undefined : rebuilt.lastRoute,
    },
  });
  if (options.signal?.aborted || core.agents.has(sessionId)) {
    rollback();
    const winner = core.agents.get(sessionId);
    if (winner && !options.signal?.aborted) return winner;
    throwIfAborted(options.signal);
  }
  core.agents.set(sessionId, agent);
  hooks.restored(agent, descriptor);
  prepared?.(agent);
  relistOpenRequests(core.agentDeps.approvals, agent, events);
  const parent = header.parentSession === undefined ? undefined : core.agents.get(header.parentSession);
  for (const [messageId, messageBudget] of unclaimed.budgets)
    applyResumedBudget(agent, parent, descriptor.callId, messageId, messageBudget);
  if (open === undefined || resumed === undefined) agent.wake();
  else {
    applyResumedBudget(agent, parent, descriptor.callId, open.messageId, resumed.budget);
    continueInterrupted(agent, open, {
      awaitingApproval: new Set(openRequests(events).map((request) => request.callId)),
      context: options.context,
      structured: resumed.structured,
      finished: finishedChildren(core.store, agent, events),
    });
  }
  return agent;
}

/** Errors of restores that ended the interrupted turn because its route is gone (brood.recover() goes on). */
const routeGone = new WeakSet<object>();

export function endedForMissingRoute(error: unknown): boolean {
  return typeof error === 'object' && error !== null && routeGone.has(error);
}

/**
 * The logged route gone from the catalog fails the turn a crash left open, with a diagnostic that says
 * so (the session is not resumed; other sessions are not affected).
 */
async function resolveLoggedRoute(
  core: RuntimeCore,
  sessionId: string,
  route: ModelRoute,
  open: OpenTurn | undefined,
  events: SessionEvent[],
): Promise<ModelRoute> {
  try {
    return core.catalog.resolve(route);
  } catch (error) {
    if (open !== undefined) {
      const diagnostic = `not resumed: model route ${route.provider}/${route.model} is not in this runtime's catalog (${errorMessage(error)})`;
      const end = { turn: open.turn, reason: 'error' as const, diagnostic };
      await core.store.append(sessionId, [
        { seq: events.length, time: core.agentDeps.now(), type: 'turn/end', data: end },
      ]);
      await core.store.flush(sessionId);
      if (typeof error === 'object' && error !== null) routeGone.add(error);
    }
    throw error;
  }
}

function withRunner(runner: DriverRunner | undefined): { runner?: DriverRunner } {
  return runner === undefined ? {} : { runner };
}

/**
 * Where the agent's own messages start: after a fork child's seed, or after the conversation a
 * top-level agent was created with (a child's given history, if any, is part of its seed).
 */
function ownStartOf(events: SessionEvent[], header: SessionHeader, givenMessages: number): number {
  return header.seedLength ? seedMessages(events, header.seedLength) : givenMessages;
}

/** How many history messages came from a fork seed: the driver's scripted cursor starts after them. */
export function seedMessages(events: SessionEvent[], seedLength: number | undefined): number {
  if (!seedLength) return 0;
  return rebuildSession(events.slice(0, seedLength)).history.length;
}

function modeOf(header: SessionHeader, descriptor: DescriptorFields): AgentInit['mode'] {
  if (header.origin !== 'subagent') return 'top';
  return descriptor.mode === 'continuable' ? 'continuable' : 'one-shot';
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new BroodError('ABORTED', 'resumeAgent was aborted; nothing was restored');
}

function isMaxSteps(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function isCodeMode(value: unknown): value is CodeMode {
  return value === 'native' || value === 'code' || value === 'both';
}

function isToolFilter(value: unknown): value is ToolFilter {
  return typeof value === 'object' && value !== null && ('allow' in value || 'deny' in value);
}
