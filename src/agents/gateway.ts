/**
 * The parent's side of a driver's port: the only door through which a driver reaches policy. Every
 * argument is validated (the worker is not trusted to send well-formed data) and every answer is a
 * Reply envelope so error codes survive the crossing.
 */
import { BroodError, decodeError } from '../errors.js';
import type { AdmitGrant, DriverView, PlannedClass, TurnReport } from '../wire/contract.js';
import { epochNow } from '../clock.js';
import { LOCAL_CLOCK } from '../wire/clock.js';
import type { DriverEmittedEvent, NewEventOf } from '../sessions/event-types.js';
import type { GatewayRemote } from '../wire/gateway.js';
import type { ToolResult } from '../types.js';
import { admitRequest, classifyArgs, driverEvents, joinTurn, replyOf, turnReport } from '../wire/protocol.js';
import { TEXT_DELTA_EVENT } from '../sessions/event-types.js';
import { baseOf } from '../events/from-log.js';
import type { CodePrograms } from './code-calls.js';
import { executeTool, plannedClassOf, runToolBatch, type GatewayAgent } from './parent-tools.js';
import { STRUCTURED_OUTPUT_TOOL } from './structured-turn.js';
import { toView } from '../tools/resolver.js';
import { presentedSchemas } from '../tools/system.js';

/**
 * One gateway per activation. A protocol violation on a one-way log (which has no reply to carry the
 * error) is remembered and fails the activation's next call instead of being lost. `programs` runs the
 * calls from inside the agent's run_code programs.
 */
export function createGateway(agent: GatewayAgent, programs: CodePrograms): GatewayRemote {
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
    callFromCode: (call: unknown) => reply(() => programs.call(call)),
    endProgram: (program: unknown) => reply(() => programs.end(program)),
    runTools: (batch: unknown) =>
      reply(() =>
        agent.deps.scheduler.governsAnyModel ? runToolsAdmittingAhead(agent, batch) : runToolBatch(agent, batch),
      ),
    log: (events: unknown) =>
      reply(() => logEvents(agent, events)).then((answer) => {
        if (!answer.ok) fault ??= decodeError(answer.error);
        return answer;
      }),
    admit: (request: unknown) =>
      reply(async () => {
        const admission = admitRequest.parse(request, 'admit');
        const slot = await agent.lease?.admitModel(admission);
        return slot === undefined ? null : grantOf(slot, agent.deps.now());
      }),
    modelProxy: (call: unknown) =>
      reply(() => {
        const proxy = agent.deps.modelProxy;
        if (proxy === undefined) throw new BroodError('INVALID_CONFIG', 'this runtime keeps no proxied AI SDK models');
        return proxy.handle(agent.id, call);
      }),
    joinMessages: (turn: unknown) => reply(() => agent.turns.joinStep(joinTurn.parse(turn, 'joinMessages'))),
    endTurn: (report: unknown) =>
      reply(async () => {
        const parsed = turnReport.parse(report, 'endTurn') as TurnReport;
        const turn = agent.turns.current;
        if (!turn || turn.turn !== parsed.turn)
          throw new BroodError('INTERNAL', `endTurn for turn ${parsed.turn}, which is not running`);
        // Cancelled before it ended, it ends aborted, whatever crossed the cancel (a final answer, say).
        const cancelled = turn.controller.signal.aborted && parsed.stopReason !== 'aborted';
        agent.lease?.requestAnswered(); // an aborted request logged no response
        await agent.turns.finish(cancelled ? { ...parsed, stopReason: 'aborted' } : parsed, turn);
        return agent.turns.claimNext();
      }),
  }) as GatewayRemote;
}

/**
 * With limits: the model request that follows the results is admitted with them when it fits
 * (TurnLease.admitAhead) — only while their turn still runs, or nothing would release that lease.
 */
async function runToolsAdmittingAhead(agent: GatewayAgent, batch: unknown): Promise<ToolResult[]> {
  const turn = agent.turns.current;
  const results = await runToolBatch(agent, batch);
  if (turn !== undefined && agent.turns.current === turn && !turn.controller.signal.aborted) agent.lease?.admitAhead();
  return results;
}

/** A paced request's slot, from the scheduler's clock onto the one that crosses (src/wire/clock.ts). */
function grantOf(slot: number, now: number): AdmitGrant {
  const grantedAt = epochNow();
  return { at: grantedAt + (slot - now), grantedAt, clock: LOCAL_CLOCK };
}

export function resolveView(agent: GatewayAgent): DriverView {
  // One resolution, read now, serves the prompt's tool view, the classes and the schemas: the same
  // instant for all three, and one pass over the layers instead of three (a delegated child's setup
  // resolved its tools four times, three of them here).
  const resolved = agent.init.tools.resolve();
  const system = agent.init.prompt.assemble(toView(resolved)).system;
  const classes: Record<string, PlannedClass> = { run_code: 'exclusive' };
  for (const tool of resolved) classes[tool.name] = plannedClassOf(tool);
  const tools = presentedSchemas(resolved, agent.codeMode);
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

function logEvents(agent: GatewayAgent, raw: unknown): Promise<void> {
  // The wire checked the envelope; the data shapes are the driver's own (the same build wrote them).
  const events = driverEvents.parse(raw, 'log') as DriverEmittedEvent[];
  if (!events.some(isDelta)) {
    for (const event of events) mirror(agent, event);
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
      mirror(agent, event);
      run.push(event);
      continue;
    }
    writeRun();
    publishDelta(agent, event);
  }
  writeRun();
  return written;
}

/** A logged response also ends the model request's admission lease (limits), its usage correcting the estimate. */
function mirror(agent: GatewayAgent, event: DriverEmittedEvent): void {
  agent.turns.mirror(event);
  if (event.type !== 'assistant/message') return;
  const { inputTokens, outputTokens } = event.data.usage;
  agent.lease?.requestAnswered(inputTokens + outputTokens);
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
