/**
 * The parent's side of a driver's port: the only door through which a driver reaches policy. Every
 * argument is validated (the worker is not trusted to send well-formed data) and every answer is a
 * Reply envelope so error codes survive the crossing.
 */
import { BroodError, decodeError, errorMessage } from '../errors.js';
import { errorResult } from '../tools/execute.js';
import type { DriverView, PlannedClass, TurnReport } from '../driver/types.js';
import type { DriverEmittedEvent, NewEventOf } from '../sessions/event-types.js';
import type { Agent, CodeMode, ToolResult } from '../types.js';
import type { GatewayRemote } from '../workers/gateway-client.js';
import { classifyArgs, driverEvents, replyOf, toolCallRequest, turnReport } from '../workers/protocol.js';
import { TEXT_DELTA_EVENT } from '../driver/loop.js';
import { baseOf } from '../events/from-log.js';
import type { SessionWriter } from './session-writer.js';
import { STRUCTURED_OUTPUT_TOOL } from './structured-turn.js';
import { callKey, type CurrentTurn, type HeldCall, type TurnLedger } from './turns.js';
import type { AgentDeps, AgentInit } from './types.js';

/** What a gateway needs of the agent it serves (implemented by AgentImpl; no import of the agent itself). */
export interface GatewayAgent extends Agent {
  readonly init: AgentInit;
  readonly deps: AgentDeps;
  readonly codeMode: CodeMode;
  readonly writer: SessionWriter;
  readonly turns: TurnLedger;
}

/**
 * One gateway per activation. A protocol violation on a one-way log (which has no reply to carry the
 * error) is remembered and fails the activation's next call instead of being lost.
 */
export function createGateway(agent: GatewayAgent): GatewayRemote {
  let fault: unknown;
  const reply = <T>(work: () => T | Promise<T>) =>
    replyOf(() => {
      if (fault !== undefined) throw fault;
      return work();
    });
  return Object.freeze({
    claimNext: () => reply(() => agent.turns.claimNext()),
    refreshView: () => reply(() => resolveView(agent)),
    classify: (name: string, args: string) =>
      reply(() => {
        const [toolName, toolArgs] = classifyArgs.parse([name, args], 'classify');
        return agent.init.tools.classify(toolName, toolArgs);
      }),
    executeTool: (call: unknown) => reply(() => executeTool(agent, call)),
    log: (events: unknown) =>
      reply(() => logEvents(agent, events)).then((answer) => {
        if (!answer.ok) fault ??= decodeError(answer.error);
        return answer;
      }),
    endTurn: (report: unknown) =>
      reply(async () => {
        const parsed = turnReport.parse(report, 'endTurn') as TurnReport;
        const turn = agent.turns.current;
        if (!turn || turn.turn !== parsed.turn)
          throw new BroodError('INTERNAL', `endTurn for turn ${parsed.turn}, which is not running`);
        await agent.turns.finish(parsed, turn);
        return agent.turns.claimNext();
      }),
  }) as GatewayRemote;
}

export function resolveView(agent: GatewayAgent): DriverView {
  const scope = agent.init.tools;
  const system = agent.init.prompt.assemble().system;
  const classes: Record<string, PlannedClass> = { run_code: 'exclusive' };
  for (const tool of scope.resolve()) {
    const safe = tool.definition.concurrencySafe;
    classes[tool.name] = typeof safe === 'function' ? 'dynamic' : safe === true ? 'parallel' : 'exclusive';
  }
  const tools = scope.presented(agent.codeMode);
  const structured = agent.turns.current?.structured;
  if (structured) {
    classes[STRUCTURED_OUTPUT_TOOL] = 'exclusive';
    return {
      system,
      tools: [...tools.filter((tool) => tool.name !== STRUCTURED_OUTPUT_TOOL), structured.schema],
      classes,
    };
  }
  return { system, tools, classes };
}

async function executeTool(agent: GatewayAgent, raw: unknown): Promise<ToolResult> {
  const call = toolCallRequest.parse(raw, 'executeTool');
  const turn = agent.turns.current;
  const key = callKey(call.origin === 'code' ? 'code' : 'model', call.callId);
  const existing = turn?.calls.get(key);
  if (existing) return existing;
  if (turn?.structured && call.name === STRUCTURED_OUTPUT_TOOL && call.origin !== 'code') {
    const recorded = turn.structured
      .execute(call.arguments, call.callId, agent)
      .then(({ value: _value, ...cloneable }) => cloneable);
    turn.calls.set(key, recorded);
    return recorded;
  }
  const request = { name: call.name, arguments: call.arguments, callId: call.callId, signal: turn?.controller.signal };
  // Calls from inside run_code run host-style (Code Mode never collapses them) and need the raw value.
  const running =
    call.origin === 'code'
      ? agent.init.tools.registry.execute(request).then(withJsonValue)
      : agent.init.tools.executeFromModel(request, agent.codeMode).then(({ value: _value, ...cloneable }) => cloneable);
  const answered = turn ? holdUntilSettled(turn, call.callId, call.name, running) : running;
  turn?.calls.set(key, answered);
  return answered;
}

/** Tracks a parent-side call while the driver waits for it, so cancel grace can tell who holds the turn. */
function holdUntilSettled(
  turn: CurrentTurn,
  callId: string,
  name: string,
  running: Promise<ToolResult>,
): Promise<ToolResult> {
  return new Promise<ToolResult>((resolve) => {
    const held: HeldCall = { callId, name, abandon: (message) => resolve(errorResult('ABORTED', message)) };
    turn.held.add(held);
    void running
      .then(resolve, (error: unknown) => resolve(errorResult('INTERNAL', errorMessage(error))))
      .finally(() => turn.held.delete(held));
  });
}

/** The raw value crosses the port only as JSON data (a tool may return anything, e.g. class instances). */
function withJsonValue(result: ToolResult): ToolResult {
  const { value, ...rest } = result;
  if (value === undefined || typeof value === 'string') return value === undefined ? rest : { ...rest, value };
  try {
    return { ...rest, value: JSON.parse(JSON.stringify(value)) as unknown };
  } catch {
    return rest;
  }
}

function logEvents(agent: GatewayAgent, raw: unknown): Promise<void> {
  // The wire checked the envelope; the data shapes are the driver's own (the same build wrote them).
  const events = driverEvents.parse(raw, 'log') as DriverEmittedEvent[];
  if (!events.some(isDelta)) {
    for (const event of events) agent.turns.mirror(event);
    // The gateway runs each message's handler synchronously in arrival order, so seq order is log order.
    return agent.writer.append(events);
  }
  // Streamed text is for subscribers only (never logged); it keeps its place among the logged events.
  let written = Promise.resolve();
  let run: DriverEmittedEvent[] = [];
  const writeRun = (): void => {
    if (run.length > 0) written = agent.writer.append(run);
    run = [];
  };
  for (const event of events) {
    if (!isDelta(event)) {
      agent.turns.mirror(event);
      run.push(event);
      continue;
    }
    writeRun();
    publishDelta(agent, event);
  }
  writeRun();
  return written;
}

function isDelta(event: DriverEmittedEvent): event is NewEventOf<'text/delta'> {
  return event.type === TEXT_DELTA_EVENT;
}

function publishDelta(agent: GatewayAgent, event: NewEventOf<'text/delta'>): void {
  const { hub } = agent.deps;
  const { turn, delta } = event.data;
  if (!hub.active || !hub.isPublished(agent)) return;
  hub.publish({ ...baseOf(agent, agent.deps.now()), type: 'text-delta', turn, delta });
}
