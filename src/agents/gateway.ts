/**
 * The parent's implementation of the gateway (declared in src/wire/protocol.ts): the only door
 * through which a driver reaches policy. serveTable checks every argument against the declaration
 * (the worker is not trusted to send well-formed data) and answers in Reply envelopes so error codes
 * survive the crossing.
 */

import { epochNow } from '../clock.js';
import { BroodError } from '../errors.js';
import { baseOf } from '../events/from-log.js';
import type { DriverEmittedEvent, NewEventOf } from '../sessions/event-types.js';
import { TEXT_DELTA_EVENT } from '../sessions/event-types.js';
import { toView } from '../tools/resolver.js';
import { presentedSchemas } from '../tools/system.js';
import type { ToolResult } from '../types.js';
import { LOCAL_CLOCK } from '../wire/clock.js';
import { type GatewayImplementation, type GatewayRemote, serveTable } from '../wire/gateway.js';
import type {
  AdmitGrant,
  DriverEvent,
  DriverView,
  GatewayArgs,
  GatewayMethodName,
  PlannedClass,
} from '../wire/protocol.js';
import type { CodePrograms } from './code-calls.js';
import { executeTool, type GatewayAgent, plannedClassOf, runToolBatch } from './parent-tools.js';
import { STRUCTURED_OUTPUT_TOOL } from './structured-turn.js';

/**
 * One gateway per activation: the methods are the class's, so an activation allocates one object
 * (and its served table) rather than a closure per method. serveTable remembers a protocol violation
 * on a one-way log (which has no reply to carry the error) and fails the activation's next call with
 * it instead of losing it. `programs` runs the calls from inside the agent's run_code programs.
 */
export function createGateway(agent: GatewayAgent, programs: CodePrograms): GatewayRemote {
  return serveTable(new ParentGateway(agent, programs));
}

/** A gateway method's first argument, as declared. */
type Arg<M extends GatewayMethodName> = GatewayArgs<M>[0];

class ParentGateway implements GatewayImplementation {
  constructor(
    private readonly agent: GatewayAgent,
    private readonly programs: CodePrograms,
  ) {}

  claimNext() {
    return this.agent.turns.claimNext();
  }
  refreshView() {
    return resolveView(this.agent);
  }
  classify(name: Arg<'classify'>, args: GatewayArgs<'classify'>[1]) {
    return this.agent.init.tools.classify(name, args);
  }
  executeTool(call: Arg<'executeTool'>) {
    return executeTool(this.agent, call);
  }
  callFromCode(call: Arg<'callFromCode'>) {
    return this.programs.call(call);
  }
  endProgram(program: Arg<'endProgram'>) {
    return this.programs.end(program);
  }
  runTools(batch: Arg<'runTools'>) {
    const agent = this.agent;
    return agent.deps.scheduler.governsAnyModel ? runToolsAdmittingAhead(agent, batch) : runToolBatch(agent, batch);
  }
  log(events: Arg<'log'>) {
    return logEvents(this.agent, events);
  }
  async admit(request: Arg<'admit'>) {
    const slot = await this.agent.lease?.admitModel(request);
    return slot === undefined ? null : grantOf(slot, this.agent.deps.now());
  }
  modelProxy(call: Arg<'modelProxy'>) {
    const proxy = this.agent.deps.modelProxy;
    if (proxy === undefined) throw new BroodError('INVALID_CONFIG', 'this runtime keeps no proxied AI SDK models');
    return proxy.handle(this.agent.id, call);
  }
  joinMessages(turn: Arg<'joinMessages'>) {
    return this.agent.turns.joinStep(turn);
  }
  async endTurn(report: Arg<'endTurn'>) {
    const agent = this.agent;
    const turn = agent.turns.current;
    if (!turn || turn.turn !== report.turn)
      throw new BroodError('INTERNAL', `endTurn for turn ${report.turn}, which is not running`);
    // Cancelled before it ended, it ends aborted, whatever crossed the cancel (a final answer, say).
    const cancelled = turn.controller.aborted && report.stopReason !== 'aborted';
    agent.lease?.requestAnswered(); // an aborted request logged no response
    await agent.turns.finish(cancelled ? { ...report, stopReason: 'aborted' } : report, turn);
    return agent.turns.claimNext();
  }
}

/**
 * With limits: the model request that follows the results is admitted with them when it fits
 * (TurnLease.admitAhead) — only while their turn still runs, or nothing would release that lease.
 */
async function runToolsAdmittingAhead(agent: GatewayAgent, batch: Arg<'runTools'>): Promise<ToolResult[]> {
  const turn = agent.turns.current;
  const results = await runToolBatch(agent, batch);
  if (turn !== undefined && agent.turns.current === turn && !turn.controller.aborted) agent.lease?.admitAhead();
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

/**
 * A logged request's texts point at the runtime's kept copies (before the store keeps them); a logged
 * response also ends the model request's admission lease (limits), its usage correcting the estimate.
 */
function mirror(agent: GatewayAgent, event: DriverEmittedEvent): void {
  if (event.type === 'model/request') agent.deps.requestTexts.share(event.data);
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
