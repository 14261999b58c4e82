/**
 * The parent's implementation of the gateway (declared in src/wire/protocol.ts): the only door
 * through which a driver reaches policy. serveTable checks every argument against the declaration
 * (the worker is not trusted to send well-formed data) and answers in Reply envelopes so error codes
 * survive the crossing.
 */

import { epochNow } from '../clock.js';
import { BroodError, decodeError } from '../errors.js';
import { baseOf } from '../events/from-log.js';
import type { DriverEmittedEvent, NewEventOf } from '../sessions/event-types.js';
import { TEXT_DELTA_EVENT } from '../sessions/event-types.js';
import { toView } from '../tools/resolver.js';
import { presentedSchemas } from '../tools/system.js';
import type { ToolResult } from '../types.js';
import { LOCAL_CLOCK } from '../wire/clock.js';
import { type GatewayRemote, serveTable } from '../wire/gateway.js';
import type { AdmitGrant, DriverEvent, DriverView, PlannedClass, ToolBatchWire } from '../wire/protocol.js';
import type { CodePrograms } from './code-calls.js';
import { executeTool, type GatewayAgent, plannedClassOf, runToolBatch } from './parent-tools.js';
import { STRUCTURED_OUTPUT_TOOL } from './structured-turn.js';

/**
 * One gateway per activation. A protocol violation on a one-way log (which has no reply to carry the
 * error) is remembered and fails the activation's next call instead of being lost. `programs` runs the
 * calls from inside the agent's run_code programs.
 */
export function createGateway(agent: GatewayAgent, programs: CodePrograms): GatewayRemote {
  let fault: unknown;
  const failIfFaulted = (): void => {
    if (fault !== undefined) throw fault;
  };
  const served = serveTable(
    {
      claimNext: () => agent.turns.claimNext(),
      refreshView: () => resolveView(agent),
      classify: (name, args) => agent.init.tools.classify(name, args),
      executeTool: (call) => executeTool(agent, call),
      callFromCode: (call) => programs.call(call),
      endProgram: (program) => programs.end(program),
      runTools: (batch) =>
        agent.deps.scheduler.governsAnyModel ? runToolsAdmittingAhead(agent, batch) : runToolBatch(agent, batch),
      log: (events) => logEvents(agent, events),
      admit: async (request) => {
        const slot = await agent.lease?.admitModel(request);
        return slot === undefined ? null : grantOf(slot, agent.deps.now());
      },
      modelProxy: (call) => {
        const proxy = agent.deps.modelProxy;
        if (proxy === undefined) throw new BroodError('INVALID_CONFIG', 'this runtime keeps no proxied AI SDK models');
        return proxy.handle(agent.id, call);
      },
      joinMessages: (turn) => agent.turns.joinStep(turn),
      endTurn: async (report) => {
        const turn = agent.turns.current;
        if (!turn || turn.turn !== report.turn)
          throw new BroodError('INTERNAL', `endTurn for turn ${report.turn}, which is not running`);
        // Cancelled before it ended, it ends aborted, whatever crossed the cancel (a final answer, say).
        const cancelled = turn.controller.signal.aborted && report.stopReason !== 'aborted';
        agent.lease?.requestAnswered(); // an aborted request logged no response
        await agent.turns.finish(cancelled ? { ...report, stopReason: 'aborted' } : report, turn);
        return agent.turns.claimNext();
      },
    },
    failIfFaulted,
  );
  return Object.freeze({
    ...served,
    log: (events) =>
      served.log(events).then((answer) => {
        if (!answer.ok) fault ??= decodeError(answer.error);
        return answer;
      }),
  });
}

/**
 * With limits: the model request that follows the results is admitted with them when it fits
 * (TurnLease.admitAhead) — only while their turn still runs, or nothing would release that lease.
 */
async function runToolsAdmittingAhead(agent: GatewayAgent, batch: ToolBatchWire): Promise<ToolResult[]> {
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

function logEvents(agent: GatewayAgent, logged: DriverEvent[]): Promise<void> {
  // The wire checked the envelope; the data shapes are the driver's own (the same build wrote them).
  const events = logged as DriverEmittedEvent[];
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
  const note = event.data.diagnostic;
  if (typeof note === 'string') agent.deps.reportDiagnostic(`agent ${agent.id}: ${note}`);
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
