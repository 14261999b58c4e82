/**
 * The model's tool calls as the parent runs them for a driver: one call at a time (`executeTool`), or
 * a whole assistant message's calls (`runToolBatch`). A batch runs the SPEC §7.2 pool here, next to
 * the resolver, so a call that settles starts the next one at once instead of after a round trip
 * through the driver's thread (where a driver shares its thread with many others); the driver gets
 * all the results, in model order, in one reply. Calls from inside run_code: code-calls.ts.
 */
import { BroodError, errorMessage } from '../errors.js';
import type { ToolCallRecord } from '../models/types.js';
import type { TurnLease } from '../scheduler/turn-lease.js';
import type { DriverEmittedEvent } from '../sessions/event-types.js';
import type { SessionWriter } from '../sessions/session-writer.js';
import { runToolCalls, toolCallData, toolResultData } from '../tool-pool.js';
import { RUN_CODE_TOOL_NAME } from '../tools/code-mode-sdk.js';
import { classifyResolved, errorResult } from '../tools/execute.js';
import type { ResolvedTool } from '../tools/resolver.js';
import type { Agent, CodeMode, ToolResult } from '../types.js';
import type { LazyAbortController } from '../util/lazy-abort.js';
import type { ConcurrencyClass, PlannedClass } from '../wire/protocol.js';
import { toolBatch, toolCallRequest } from '../wire/protocol.js';
import { interruptedResult } from './resumed-calls.js';
import { StartGate } from './start-gate.js';
import { STRUCTURED_OUTPUT_TOOL } from './structured-turn.js';
import type { CurrentTurn, HeldCall, TurnLedger } from './turns.js';
import type { AgentDeps, AgentInit } from './types.js';

/** What a gateway needs of the agent it serves (implemented by AgentImpl; no import of the agent itself). */
export interface GatewayAgent extends Agent {
  readonly init: AgentInit;
  readonly deps: AgentDeps;
  readonly codeMode: CodeMode;
  readonly writer: SessionWriter;
  readonly turns: TurnLedger;
  /** What the running activation holds of the scheduler (undefined while idle). */
  readonly lease: TurnLease | undefined;
}

/** The class a view ships for a tool: static ones as they are, a concurrencySafe function as 'dynamic'. */
export function plannedClassOf(tool: ResolvedTool): PlannedClass {
  const safe = tool.definition.concurrencySafe;
  return typeof safe === 'function' ? 'dynamic' : safe === true ? 'parallel' : 'exclusive';
}

export async function executeTool(agent: GatewayAgent, raw: unknown): Promise<ToolResult> {
  const call = toolCallRequest.parse(raw, 'executeTool');
  const turn = agent.turns.current;
  const existing = turn?.calls.get(call.callId);
  if (existing) return existing;
  const notRun = turn && interruptedResult(agent, turn, call.callId, call.name);
  if (notRun) return notRun;
  if (turn?.structured && call.name === STRUCTURED_OUTPUT_TOOL) {
    const recorded = turn.structured.execute(call.arguments, call.callId, agent).then(cloneablePart);
    turn.calls.set(call.callId, recorded);
    return recorded;
  }
  const cancel = turn?.controller;
  const running = afterLogged(agent, () => gated(agent, call, cancel));
  const answered = turn ? holdUntilSettled(turn, call.callId, call.name, running) : running.then(cloneablePart);
  turn?.calls.set(call.callId, answered);
  return answered;
}

/** What crosses back to a driver: the result without the tool's raw value (which may not clone). */
function cloneablePart({ value: _value, ...cloneable }: ToolResult): ToolResult {
  return cloneable;
}

/**
 * Write before effect: the call's `tool/call` (and the assistant message before it) was appended
 * before this call arrived; the body starts only once that write is complete, so a crash can never
 * lose the record of a call that ran. Calls that start together share one write (SessionWriter).
 * A `then`, not an async function: a wide fan-out holds one of these per running child.
 */
function afterLogged(agent: GatewayAgent, run: () => Promise<ToolResult>): Promise<ToolResult> {
  return agent.writer
    .written()
    .then(run, (error: unknown) =>
      errorResult('INTERNAL', `not run: the session write before it failed: ${errorMessage(error)}`),
    );
}

/**
 * The call through the approval gate, then the resolver. A call the resolver refuses outright (code
 * mode's direct calls) skips the gate: nobody should be asked about a call that cannot run.
 */
async function gated(
  agent: GatewayAgent,
  call: { name: string; arguments: unknown; callId: string },
  cancel: LazyAbortController | undefined,
): Promise<ToolResult> {
  const tools = agent.init.tools;
  const refused = agent.codeMode === 'code' || call.name === RUN_CODE_TOOL_NAME;
  const outcome = refused
    ? { run: true as const, args: call.arguments }
    : await agent.deps.approvals.check(agent, { ...call, ...turnContext(agent) }, false, cancel);
  if (!outcome.run) return outcome.result;
  const execute = () =>
    agent.deps.scheduler.asCaller(agent.lease, () =>
      tools.executeFromModel(
        { name: call.name, arguments: outcome.args, callId: call.callId, signal: cancel, ...turnContext(agent) },
        agent.codeMode,
      ),
    );
  // Under telemetry the call is the scope of what its execute() starts (a subagent's spans nest under its span).
  const { telemetry } = agent.deps.hub;
  return telemetry ? telemetry.withCall(agent.id, call.callId, execute) : execute();
}

/** The running turn's per-request context, for a call it makes (absent when it has none). */
export function turnContext(agent: Pick<GatewayAgent, 'turns'>): { context?: unknown } {
  const context = agent.turns.current?.context;
  return context === undefined ? {} : { context };
}

/**
 * Runs one assistant message's calls (the driver has logged the message). The pool, the barriers, the
 * start order and the commit order are the driver's own (src/tool-pool.ts); the class is read
 * from the live registry right before each start, `tool/call` is logged at the start and `tool/result`
 * at the commit. A driver recovered onto another thread re-issues the calls it has no result for: they
 * re-attach to this batch, which kept running here, and get the results it logs, once.
 */
export function runToolBatch(agent: GatewayAgent, raw: unknown): Promise<ToolResult[]> {
  const { calls } = toolBatch.parse(raw, 'runTools');
  const turn = agent.turns.current;
  if (!turn) throw new BroodError('INTERNAL', 'runTools while no turn is running');
  const attached = calls.map((call) => turn.committed.get(call.callId));
  if (attached.every((result) => result !== undefined)) return Promise.all(attached as Promise<ToolResult>[]);

  const settle = new Map<string, (result: ToolResult) => void>();
  for (const call of calls) turn.committed.set(call.callId, new Promise((resolve) => settle.set(call.callId, resolve)));
  const live = (): boolean => agent.turns.current === turn;
  // New starts stop when the turn is cancelled or has ended (a driver that failed mid-batch ends it).
  const stop = {
    get aborted() {
      return turn.controller.aborted || !live();
    },
  };
  const gate = new StartGate();
  return runToolCalls(calls, agent.deps.limits.maxParallelToolCalls, stop, {
    classify: (call) => classOf(agent, turn, call),
    execute: (call) => gate.run(() => executeTool(agent, call)),
    started: (call) => {
      if (live() && !turn.started.has(call.callId))
        logParentEvent(agent, {
          type: 'tool/call',
          data: toolCallData(call),
        });
    },
    commit: (call, result) => {
      if (live()) logParentEvent(agent, { type: 'tool/result', data: toolResultData(call, result) });
      settle.get(call.callId)?.(result);
    },
  });
}

/** The driver's rule, read live: run_code and a structured turn's tool are barriers, unknown tools too. */
export function classOf(
  agent: GatewayAgent,
  turn: CurrentTurn | undefined,
  call: Pick<ToolCallRecord, 'name' | 'arguments'>,
): ConcurrencyClass {
  if (call.name === RUN_CODE_TOOL_NAME || (turn?.structured && call.name === STRUCTURED_OUTPUT_TOOL))
    return 'exclusive';
  const tool = agent.init.tools.find(call.name);
  if (tool === undefined) return 'exclusive';
  const planned = plannedClassOf(tool);
  return planned === 'dynamic' ? classifyResolved(tool, call.arguments) : planned;
}

/** Logged as if the driver had sent it: mirrored into the turn's state, appended in order. */
function logParentEvent(agent: GatewayAgent, event: DriverEmittedEvent): void {
  agent.turns.mirror(event);
  void agent.writer.append([event]).catch(() => undefined);
}

/**
 * Tracks a parent-side call while the driver waits for it, so cancel grace can tell who holds the
 * turn, and answers with its cloneable part (one reaction on the running call).
 */
function holdUntilSettled(
  turn: CurrentTurn,
  callId: string,
  name: string,
  running: Promise<ToolResult>,
): Promise<ToolResult> {
  return new Promise<ToolResult>((resolve) => {
    const held: HeldCall = { callId, name, abandon: (message) => resolve(errorResult('ABORTED', message)) };
    turn.held ??= new Set();
    turn.held.add(held);
    running.then(
      (result) => {
        releaseHeld(turn, held);
        resolve(cloneablePart(result));
      },
      (error: unknown) => {
        releaseHeld(turn, held);
        resolve(errorResult('INTERNAL', errorMessage(error)));
      },
    );
  });
}

function releaseHeld(turn: CurrentTurn, held: HeldCall): void {
  turn.held?.delete(held);
  if (turn.held?.size === 0) turn.held = undefined;
}
