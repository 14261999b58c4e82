/**
 * The approval gate. Every call of every agent, native or from run_code, reaches the parent's
 * resolver; the gate sits just before it. A call that needs the host is parked on a deferred of its
 * own: the rest of the turn, the agent's siblings and every other agent run on, and no thread is held
 * (the driver only waits for a reply). The request is durable in the calling agent's session before
 * anyone hears of it, and the decision before it is applied, so a restarted host lists what was asked
 * and never asks again what was answered (src/approvals/restored.ts).
 */
import { z } from 'zod';
import type { Clock } from '../clock.js';
import { DEFAULTS } from '../defaults.js';
import { BroodError, errorMessage } from '../errors.js';
import { baseOf } from '../events/from-log.js';
import type { EventHub } from '../events/hub.js';
import type { NewEventOf } from '../sessions/event-types.js';
import type { SessionWriter } from '../sessions/session-writer.js';
import { errorResult, parseArguments, toolContext } from '../tools/execute.js';
import type { AgentToolScope } from '../tools/system.js';
import type { Agent, ToolDefinition, ToolResult } from '../types.js';
import type { IdGenerator } from '../util/ids.js';
import type { Cancellation } from '../util/lazy-abort.js';
import { readUntrusted, snapshot } from '../util/untrusted.js';
import { isChildApprovals, needsNoDecision, tighter, verdictFor } from './decide.js';
import type {
  ApprovalOutcome,
  ApprovalRequest,
  ApprovalResponse,
  Approvals,
  ApprovalsOptions,
  ApprovalVerdict,
  ChildApprovals,
} from './types.js';

/** What the gate needs of the calling agent (AgentImpl is one). */
export interface GateAgent extends Agent {
  readonly writer: SessionWriter;
  readonly init: { readonly tools: AgentToolScope };
}

export interface GateCall {
  name: string;
  arguments: unknown;
  callId: string;
  /** The per-request context of the run the call serves: a tool's approval rule reads it as `ctx.context`. */
  context?: unknown;
}

/** `run` with the arguments to run with (the host's when it edited them), or the result the model gets instead. */
export type GateOutcome = { run: true; args: unknown } | { run: false; result: ToolResult };

const RUN_AS_IS = (args: unknown): GateOutcome => ({ run: true, args });

/** A request the host has not answered. `settle` applies a decision already recorded. */
export interface Parked {
  readonly request: ApprovalRequest;
  readonly agent: GateAgent;
  readonly definition: ToolDefinition;
  /** What runs when the host approves without editing: the model's arguments as they came. */
  readonly modelArgs: unknown;
  settle(outcome: GateOutcome): void;
  /** Stops the expiry timer and the cancel listener. */
  release(): void;
}

const responseSchema = z.union([
  z.strictObject({ approve: z.literal(true), args: z.unknown().optional() }),
  z.strictObject({ approve: z.literal(false), message: z.string().optional() }),
]);

/**
 * What the runtime does around a parked call (the scheduler lends out the agent's turn slot while it
 * waits, and takes one back before the answer is applied): `parked` settles with the answer.
 */
export type WhileParked = (
  agent: GateAgent,
  parked: Promise<GateOutcome>,
  signal: Cancellation | undefined,
) => Promise<GateOutcome>;

export class ApprovalGate implements Approvals {
  private readonly waiting = new Map<string, Parked>();
  /** Each child's rule from its ancestry (the delegation tools' `approvals`, tightened on the way down). */
  private readonly childRules = new Map<string, ChildApprovals>();
  readonly timeoutMs: number;
  readonly children: ChildApprovals;

  constructor(
    readonly options: ApprovalsOptions | undefined,
    private readonly deps: {
      ids: IdGenerator;
      hub: EventHub;
      now: () => number;
      /** Expiry's timers (a request waiting a day must not keep a host alive that has nothing else to do). */
      clock: Pick<Clock, 'setTimeout'>;
      whileParked?: WhileParked;
    },
  ) {
    this.timeoutMs = options?.timeoutMs ?? DEFAULTS.approvals.timeoutMs;
    this.children = options?.children ?? DEFAULTS.approvals.children;
  }

  /**
   * Decides one call before it runs. Calls the resolver will refuse anyway (unknown tool, arguments
   * that fail the schema) are let through: they never reach a body, and the model gets the real error.
   */
  async check(
    agent: GateAgent,
    call: GateCall,
    viaCode: boolean,
    signal: Cancellation | undefined,
  ): Promise<GateOutcome> {
    const definition = agent.init.tools.find(call.name)?.definition;
    if (definition === undefined || needsNoDecision(definition, this.options)) return RUN_AS_IS(call.arguments);
    let args: unknown;
    try {
      args = definition.parse(parseArguments(call.name, call.arguments));
    } catch {
      return RUN_AS_IS(call.arguments);
    }
    const ctx = toolContext(call.callId, agent, signal ?? new AbortController().signal);
    if (call.context !== undefined) ctx.context = call.context;
    const subject = { tool: call.name, args, callId: call.callId, ...origin(agent), viaCode };
    const decided = verdictFor(definition, args, ctx, subject, this.options);
    const verdict = typeof decided === 'string' ? decided : await this.boundedInTime(decided, signal);
    if (verdict === 'unanswered')
      return this.refuse(agent, call, 'expired', 'its approval rule did not answer in time');
    if (verdict === 'allow') return RUN_AS_IS(call.arguments);
    if (verdict === 'ask' && this.childMayAsk(agent))
      return this.park(agent, definition, subject, call.arguments, signal);
    const reason =
      verdict === 'deny' ? 'its approval policy refused it' : 'it needs approval, which children may not ask';
    return this.refuse(agent, call, 'denied', reason);
  }

  pending(filter?: { agentId?: string }): ApprovalRequest[] {
    const agentId = readUntrusted('INVALID_ARGS', 'pending() filter', () => filter?.agentId);
    if (agentId !== undefined && typeof agentId !== 'string')
      throw new BroodError('INVALID_ARGS', 'pending({ agentId }) takes an agent id string');
    const all = [...this.waiting.values()].map((parked) => ({ ...parked.request }));
    return agentId === undefined ? all : all.filter((request) => request.agentId === agentId);
  }

  async respond(approvalId: string, response: ApprovalResponse): Promise<void> {
    const parked = typeof approvalId === 'string' ? this.waiting.get(approvalId) : undefined;
    if (parked === undefined)
      throw new BroodError('UNKNOWN_APPROVAL', `No pending approval "${String(approvalId)}"`, {
        details: { approvalId },
      });
    // A copy of the host's plain data: its getters run once, here, and cannot answer differently later.
    const copy = snapshot('INVALID_ARGS', 'respond() response', response);
    const parsed = readUntrusted('INVALID_ARGS', 'respond() response', () => responseSchema.safeParse(copy));
    if (!parsed.success)
      throw new BroodError('INVALID_ARGS', 'respond() takes { approve: true, args? } or { approve: false, message? }');
    const decision = parsed.data;
    if (!decision.approve) {
      const message = decision.message ?? 'the host denied this call';
      const result = errorResult('APPROVAL_DENIED', message);
      return this.resolve(parked, 'denied', 'host', { run: false, result }, { message });
    }
    if (decision.args === undefined)
      return this.resolve(parked, 'approved', 'host', { run: true, args: parked.modelArgs }, {});
    // Checked while the request is still pending: edited arguments that fail the schema change nothing.
    readUntrusted('INVALID_ARGS', 'respond() args', () => parked.definition.parse(decision.args));
    return this.resolve(parked, 'approved', 'host', { run: true, args: decision.args }, { args: decision.args });
  }

  /**
   * A new child's rule: what its delegation tool asks, never looser than what its parent is held to.
   * undefined when neither says anything (the runtime's `children` alone applies, read at each call).
   */
  ruleForChild(childId: string, parentId: string, requested: ChildApprovals | undefined): ChildApprovals | undefined {
    const inherited = this.childRules.get(parentId);
    if (requested === undefined && inherited === undefined) return undefined;
    const rule = tighter(requested ?? this.children, inherited);
    this.childRules.set(childId, rule);
    return rule;
  }

  /** A restored child gets back the rule its descriptor recorded. */
  restoreRule(childId: string, recorded: unknown): void {
    if (isChildApprovals(recorded)) this.childRules.set(childId, recorded);
  }

  forget(agentId: string): void {
    this.childRules.delete(agentId);
  }

  /** Lists a request (new, or found open in a restored session) and arms its expiry. */
  list(parked: Parked): void {
    this.waiting.set(parked.request.approvalId, parked);
    const { agent, request } = parked;
    this.deps.hub.publish({ ...baseOf(agent, this.deps.now()), type: 'approval-request', ...requestFields(request) });
  }

  /**
   * Expires every request of an agent being disposed, before its session is released: nothing would
   * run an answer any more, so `respond()` must not report one as accepted.
   */
  expireAllOf(agentId: string): void {
    for (const parked of [...this.waiting.values()])
      if (parked.agent.id === agentId) this.expire(parked.request.approvalId);
  }

  /** Expires a request now (its timer ran out, its turn was cancelled or ended). */
  expire(approvalId: string): void {
    const parked = this.waiting.get(approvalId);
    if (parked === undefined) return;
    const result = errorResult('APPROVAL_EXPIRED', `The call to "${parked.request.tool}" was not approved in time`);
    void this.resolve(parked, 'expired', 'policy', { run: false, result }, {}).catch(() => undefined);
  }

  armExpiry(approvalId: string): () => void {
    return this.deps.clock.setTimeout(() => this.expire(approvalId), this.timeoutMs);
  }

  newApprovalId(): string {
    return this.deps.ids('approval');
  }

  private childMayAsk(agent: GateAgent): boolean {
    if (agent.depth === 0 && agent.parentId === undefined) return true;
    return tighter(this.children, this.childRules.get(agent.id)) === 'ask';
  }

  private async park(
    agent: GateAgent,
    definition: ToolDefinition,
    subject: Omit<ApprovalRequest, 'approvalId'>,
    modelArgs: unknown,
    signal: Cancellation | undefined,
  ): Promise<GateOutcome> {
    const request: ApprovalRequest = { ...requestFields(subject), approvalId: this.newApprovalId() };
    await agent.writer.append([requestEvent(request)]);
    if (signal?.aborted) return this.expireUnlisted(agent, request);
    const parked = new Promise<GateOutcome>((settle) => {
      const onAbort = (): void => this.expire(request.approvalId);
      const cancelTimer = this.armExpiry(request.approvalId);
      signal?.addEventListener('abort', onAbort, { once: true });
      const release = (): void => {
        cancelTimer();
        signal?.removeEventListener('abort', onAbort);
      };
      this.list({ request, agent, definition, modelArgs, settle, release });
    });
    return this.deps.whileParked?.(agent, parked, signal) ?? parked;
  }

  /** Records the decision, then applies it (a decision lost in a crash is asked again; a recorded one never). */
  private async resolve(
    parked: Parked,
    decision: ApprovalOutcome,
    by: 'host' | 'policy',
    outcome: GateOutcome,
    extra: { args?: unknown; message?: string },
  ): Promise<void> {
    const { request, agent } = parked;
    if (!this.waiting.delete(request.approvalId)) return;
    parked.release();
    try {
      await agent.writer.append([resolvedEvent(request, decision, by, extra)]);
    } catch (error) {
      parked.settle({
        run: false,
        result: errorResult('INTERNAL', `the decision could not be recorded: ${errorMessage(error)}`),
      });
      throw error;
    }
    this.announce(agent, request, decision, by);
    parked.settle(outcome);
  }

  /** A call refused without asking anyone (the tool's rule, the policy, or the children rule). */
  private async refuse(
    agent: GateAgent,
    call: GateCall,
    decision: 'denied' | 'expired',
    reason: string,
  ): Promise<GateOutcome> {
    const request = { approvalId: this.newApprovalId(), callId: call.callId, tool: call.name };
    await agent.writer.append([resolvedEvent(request, decision, 'policy', { message: reason })]);
    this.announce(agent, request, decision, 'policy');
    const code = decision === 'denied' ? 'APPROVAL_DENIED' : 'APPROVAL_EXPIRED';
    const verb = decision === 'denied' ? 'was denied' : 'expired';
    return { run: false, result: errorResult(code, `The call to "${call.name}" ${verb}: ${reason}`) };
  }

  /**
   * A rule's promised verdict, or 'unanswered' once `timeoutMs` passes or the turn is cancelled first:
   * a rule that never settles must not hold the call (and its turn) longer than a host's answer could.
   */
  private boundedInTime(
    verdict: Promise<ApprovalVerdict>,
    signal: Cancellation | undefined,
  ): Promise<ApprovalVerdict | 'unanswered'> {
    return new Promise((settle) => {
      const finish = (answer: ApprovalVerdict | 'unanswered'): void => {
        cancelTimer();
        signal?.removeEventListener('abort', onAbort);
        settle(answer);
      };
      const onAbort = (): void => finish('unanswered');
      const cancelTimer = this.deps.clock.setTimeout(onAbort, this.timeoutMs);
      if (signal?.aborted) return finish('unanswered');
      signal?.addEventListener('abort', onAbort, { once: true });
      void verdict.then(finish);
    });
  }

  /** Ends a request that was recorded but never listed (its turn was cancelled, or its tool is gone after a restart). */
  async expireUnlisted(agent: GateAgent, request: ApprovalRequest): Promise<GateOutcome> {
    await agent.writer.append([resolvedEvent(request, 'expired', 'policy', {})]);
    this.announce(agent, request, 'expired', 'policy');
    return {
      run: false,
      result: errorResult('APPROVAL_EXPIRED', 'The turn was cancelled before the call was approved'),
    };
  }

  private announce(
    agent: GateAgent,
    request: Pick<ApprovalRequest, 'approvalId' | 'callId' | 'tool'>,
    decision: ApprovalOutcome,
    by: 'host' | 'policy',
  ): void {
    const { approvalId, callId, tool } = request;
    this.deps.hub.publish({
      ...baseOf(agent, this.deps.now()),
      type: 'approval-resolved',
      approvalId,
      callId,
      tool,
      decision,
      by,
    });
  }
}

function origin(agent: Agent): { agentId: string; parentId: string | undefined; depth: number } {
  return { agentId: agent.id, parentId: agent.parentId, depth: agent.depth };
}

/** Exactly the request's fields (a policy's subject has the same ones under other names). */
function requestFields(from: Omit<ApprovalRequest, 'approvalId'> & { approvalId?: string }): ApprovalRequest {
  const { approvalId = '', agentId, parentId, depth, callId, tool, args, viaCode } = from;
  return { approvalId, agentId, parentId, depth, callId, tool, args, viaCode };
}

export function requestEvent(request: ApprovalRequest): NewEventOf<'approval/request'> {
  const { approvalId, callId, tool, args, viaCode } = request;
  return { type: 'approval/request', data: { approvalId, callId, tool, args, viaCode } };
}

function resolvedEvent(
  request: Pick<ApprovalRequest, 'approvalId' | 'callId' | 'tool'>,
  decision: ApprovalOutcome,
  by: 'host' | 'policy',
  extra: { args?: unknown; message?: string },
): NewEventOf<'approval/resolved'> {
  const { approvalId, callId, tool } = request;
  return { type: 'approval/resolved', data: { approvalId, callId, tool, decision, by, ...extra } };
}
