/**
 * The parent's side of a driver's port: the only door through which a driver reaches policy. Every
 * argument is validated (the worker is not trusted to send well-formed data) and every answer is a
 * Reply envelope so error codes survive the crossing.
 */
import { setMaxListeners } from 'node:events';
import { BroodError, decodeError } from '../errors.js';
import type { DriverEvent, DriverView, PlannedClass, TurnReport } from '../driver/types.js';
import type { ToolResult, TurnResult, Usage } from '../types.js';
import type { GatewayRemote } from '../workers/gateway-client.js';
import {
  classifyArgsSchema,
  parseEvents,
  parseMessage,
  parseToolCall,
  replyOf,
  turnReportSchema,
} from '../workers/protocol.js';
import type { AgentImpl } from './agent.js';
import { routeOfRequest } from './history.js';
import { TEXT_DELTA_EVENT } from '../driver/loop.js';
import { baseOf } from '../events/from-log.js';
import { STRUCTURED_OUTPUT_TOOL, type StructuredTurn } from './structured-turn.js';

export interface CurrentTurn {
  turn: number;
  messageId: string;
  /** The parent-side signal handed to the turn's tool calls (and through them to foreground children). */
  controller: AbortController;
  childUsage: Usage;
  /** The turn's own usage and output, from the logged assistant messages (survives a driver recovery). */
  usage: Usage;
  output: string;
  /** Call ids whose `tool/call` event is logged. */
  started: Set<string>;
  /** `finish` of the turn's latest logged assistant message (a recovery must not re-ask a finished turn). */
  lastFinish: string | undefined;
  /** Run when the turn ends (timers). */
  cleanup: (() => void)[];
  /** In-flight and uncommitted tool calls by call id: a re-issued call re-attaches instead of running twice. */
  calls: Map<string, Promise<ToolResult>>;
  /** run(text, { outputSchema }): this turn's structured_output tool and what it recorded. */
  structured: StructuredTurn | undefined;
}

/**
 * One gateway per activation. A protocol violation on a one-way log (which has no reply to carry the
 * error) is remembered and fails the activation's next call instead of being lost.
 */
export function createGateway(agent: AgentImpl): GatewayRemote {
  let fault: unknown;
  const reply = <T>(work: () => T | Promise<T>) =>
    replyOf(() => {
      if (fault !== undefined) throw fault;
      return work();
    });
  return Object.freeze({
    claimNext: () => reply(() => claimNext(agent)),
    refreshView: () => reply(() => resolveView(agent)),
    classify: (name: string, args: string) =>
      reply(() => {
        const [toolName, toolArgs] = parseMessage(classifyArgsSchema, [name, args], 'classify');
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
        const parsed = parseMessage(turnReportSchema, report, 'endTurn') as TurnReport;
        const turn = agent.current;
        if (!turn || turn.turn !== parsed.turn) throw new BroodError('INTERNAL', `endTurn for turn ${parsed.turn}, which is not running`);
        await endTurnInParent(agent, parsed, turn);
        return claimNext(agent);
      }),
  }) as GatewayRemote;
}

export async function claimNext(agent: AgentImpl): Promise<{ turn: number; messageId: string; text: string; aborted: boolean } | null> {
  for (;;) {
    if (agent.isDisposed) return null;
    const head = agent.inbox.shift();
    if (!head) return null;
    try {
      await head.durable;
    } catch {
      continue; // its send() already rejected: the message was never accepted
    }
    const turn = agent.lastTurn + 1;
    agent.lastTurn = turn;
    const aborted = head.signal?.aborted === true;
    agent.current = {
      turn,
      messageId: head.id,
      controller: turnController(),
      childUsage: { inputTokens: 0, outputTokens: 0 },
      usage: { inputTokens: 0, outputTokens: 0 },
      output: '',
      started: new Set(),
      lastFinish: undefined,
      cleanup: [],
      calls: new Map(),
      structured: head.structured,
    };
    // The turn tool changes what the model is shown: drivers re-read their view before the next request.
    if (head.structured) agent.ownVersion.bump();
    agent.history.push({ role: 'user', text: head.text });
    // Durable before any tool of the turn runs: after a crash this message is never run again.
    agent.writer.append([{ type: 'turn/start', data: { turn, messageIds: [head.id] } }]);
    await agent.writer.flush();
    // Re-read after the flush: a cancel that raced with the claim reached no running turn in the driver.
    return { turn, messageId: head.id, text: head.text, aborted: aborted || agent.current?.controller.signal.aborted === true };
  }
}

/** Every parallel call of a turn (e.g. hundreds of sibling delegations) listens to this one signal. */
function turnController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

export function resolveView(agent: AgentImpl): DriverView {
  const scope = agent.init.tools;
  const system = agent.init.prompt.assemble().system;
  const classes: Record<string, PlannedClass> = { run_code: 'exclusive' };
  for (const tool of scope.resolve()) {
    const safe = tool.definition.concurrencySafe;
    classes[tool.name] = typeof safe === 'function' ? 'dynamic' : safe === true ? 'parallel' : 'exclusive';
  }
  const tools = scope.presented(agent.codeMode);
  const structured = agent.current?.structured;
  if (structured) {
    classes[STRUCTURED_OUTPUT_TOOL] = 'exclusive';
    return { system, tools: [...tools.filter((tool) => tool.name !== STRUCTURED_OUTPUT_TOOL), structured.schema], classes };
  }
  return { system, tools, classes };
}

async function executeTool(agent: AgentImpl, raw: unknown): Promise<ToolResult> {
  const call = parseToolCall(raw);
  const turn = agent.current;
  const existing = turn?.calls.get(call.callId);
  if (existing) return existing;
  if (turn?.structured && call.name === STRUCTURED_OUTPUT_TOOL && call.origin !== 'code') {
    const recorded = turn.structured.execute(call.arguments, call.callId, agent).then(({ value: _value, ...cloneable }) => cloneable);
    turn.calls.set(call.callId, recorded);
    return recorded;
  }
  const request = { name: call.name, arguments: call.arguments, callId: call.callId, signal: turn?.controller.signal };
  // Calls from inside run_code run host-style (Code Mode never collapses them) and need the raw value.
  const running =
    call.origin === 'code'
      ? agent.init.tools.registry.execute(request).then(withJsonValue)
      : agent.init.tools.executeFromModel(request, agent.codeMode).then(({ value: _value, ...cloneable }) => cloneable);
  turn?.calls.set(call.callId, running);
  return running;
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

function logEvents(agent: AgentImpl, raw: unknown): Promise<void> {
  const events = parseEvents(raw) as DriverEvent[];
  if (!events.some(isDelta)) {
    for (const event of events) applyToParent(agent, event);
    // The gateway runs each message's handler synchronously in arrival order, so seq order is log order.
    return agent.writer.append(events);
  }
  // Streamed text is for subscribers only (never logged); it keeps its place among the logged events.
  let written = Promise.resolve();
  let run: DriverEvent[] = [];
  const writeRun = (): void => {
    if (run.length > 0) written = agent.writer.append(run);
    run = [];
  };
  for (const event of events) {
    if (!isDelta(event)) {
      applyToParent(agent, event);
      run.push(event);
      continue;
    }
    writeRun();
    publishDelta(agent, event);
  }
  writeRun();
  return written;
}

function isDelta(event: DriverEvent): boolean {
  return event.type === TEXT_DELTA_EVENT;
}

function publishDelta(agent: AgentImpl, event: DriverEvent): void {
  const { hub } = agent.deps;
  const { turn, delta } = event.data;
  if (!hub.active || typeof delta !== 'string' || typeof turn !== 'number' || !hub.isPublished(agent)) return;
  hub.publish({ ...baseOf(agent, agent.deps.now()), type: 'text-delta', turn, delta });
}

/** The parent mirrors the history so the next activation (or a recovery) starts from what was logged. */
function applyToParent(agent: AgentImpl, event: DriverEvent): void {
  const { data } = event;
  if (event.type === 'model/request') {
    agent.lastRequestRoute = routeOfRequest(data);
  } else if (event.type === 'assistant/message') {
    const text = String(data.text ?? '');
    agent.history.push({ role: 'assistant', text, toolCalls: (data.toolCalls ?? []) as never });
    const turn = agent.current;
    if (turn) {
      const usage = data.usage as Partial<Usage> | undefined;
      turn.usage.inputTokens += Number(usage?.inputTokens ?? 0);
      turn.usage.outputTokens += Number(usage?.outputTokens ?? 0);
      if (text.trim() !== '') turn.output = text;
      turn.lastFinish = String(data.finish);
    }
  } else if (event.type === 'tool/call') {
    agent.current?.started.add(String(data.callId));
  } else if (event.type === 'tool/result') {
    agent.history.push({ role: 'tool', callId: String(data.callId), name: String(data.name), content: String(data.content), isError: data.isError === true });
    agent.current?.calls.delete(String(data.callId));
  }
}

export async function endTurnInParent(agent: AgentImpl, report: TurnReport, turn: CurrentTurn): Promise<void> {
  if (agent.current === turn) agent.current = undefined;
  for (const cleanup of turn.cleanup) cleanup();
  // The parent's own tally (from logged assistant messages) is authoritative: it survives recoveries.
  const usage = {
    inputTokens: turn.usage.inputTokens + turn.childUsage.inputTokens,
    outputTokens: turn.usage.outputTokens + turn.childUsage.outputTokens,
  };
  const { stopReason, diagnostic: reportDiagnostic } = structuredOutcome(report, turn.structured);
  const diagnostic = reportDiagnostic === undefined ? {} : { diagnostic: reportDiagnostic };
  agent.writer.append([{ type: 'turn/end', data: { turn: report.turn, reason: stopReason, ...diagnostic } }], { usage });
  if (turn.structured) agent.ownVersion.bump(); // the turn tool is gone for the next request
  try {
    await agent.writer.flush();
  } catch (error) {
    agent.inbox.fail(turn.messageId, error);
    return;
  }
  const result: TurnResult = { output: turn.output, stopReason, usage, ...diagnostic };
  if (turn.structured?.set) result.structured = turn.structured.value;
  agent.lastResult = result;
  agent.inbox.settle(turn.messageId, result);
}

/** A structured turn that completed without a valid structured_output call did not do what was asked. */
function structuredOutcome(report: TurnReport, structured: StructuredTurn | undefined): Pick<TurnReport, 'stopReason' | 'diagnostic'> {
  if (structured === undefined || structured.set || report.stopReason !== 'completed') {
    return report.diagnostic === undefined ? { stopReason: report.stopReason } : { stopReason: report.stopReason, diagnostic: report.diagnostic };
  }
  return { stopReason: 'error', diagnostic: `the turn ended without a valid ${STRUCTURED_OUTPUT_TOOL} call` };
}
