/**
 * The three routes of a delegation call (SPEC §11.4–§11.7). Every start goes through the runtime,
 * which runs the gate, depth check, route validation and unpublished setup before any child exists;
 * a rejection propagates as a thrown BroodError, which the resolver turns into `Error: <message>`
 * with that code — no child, no job.
 */
import type { Brood } from '../brood.js';
import { BroodError, errorMessage } from '../errors.js';
import { pluginAccess } from '../runtime/plugin-access.js';
import { asDelegatingCall } from '../subagents/delegating-call.js';
import type { SubagentResult, SubagentRun, SubagentStartRequest } from '../subagents/types.js';
import { withContent } from '../tools/execute.js';
import { takeInterrupted } from '../tools/interrupted.js';
import { ToolAnswerError } from '../tools/thrown.js';
import type { Agent, JsonSchemaObject, ToolContext } from '../types.js';
import { onAbort } from '../util/abort-listeners.js';
import { buildRequest, type DelegationCall, parseCall } from './call.js';
import type { ResolvedSubagentToolConfig } from './config.js';
import {
  bothFailedMessage,
  disposeAfterCompletionMessage,
  disposeAfterFailureSuffix,
  failureMessage,
} from './render.js';
import { type InterruptedChild, interruptedChild } from './resume.js';
import { callingAgent, subagentsOf } from './shared.js';

export interface ForegroundValue {
  kind: 'foreground';
  runId: string;
  output: { type: 'text'; text: string }[];
  /** The child's structured output, when the call asked for one (served delegations only). */
  structured?: unknown;
}
export interface BackgroundValue {
  kind: 'background';
  jobId: string;
}
export interface ContinuableValue {
  kind: 'continuable';
  subagentId: string;
}

export interface DelegationDeps {
  brood: Brood;
  config: ResolvedSubagentToolConfig;
  /** Whether model selection is enabled for this calling agent (§11.9). */
  selectionFor(agent: Agent): boolean;
}

/** What a caller other than the model-facing tool may add to the start request (the MCP server's output_schema). */
export interface DelegationExtras {
  outputSchema?: JsonSchemaObject;
  /** A background job's owner is told when it finished (default true; the MCP server's parents are not). */
  notifyOwner?: boolean;
}

/** The tool body: parse, pick the route, start. */
export async function runDelegation(
  deps: DelegationDeps,
  raw: unknown,
  ctx: ToolContext,
  extras: DelegationExtras = {},
): Promise<unknown> {
  const parent = callingAgent(ctx, deps.config.toolName);
  const call = parseCall(deps.config, raw, deps.selectionFor(parent));
  const request: Request = buildRequest(deps.config, parent, call);
  // The child's turns serve this call: they read the same per-request context.
  if (ctx.context !== undefined) request.context = ctx.context;
  if (extras.outputSchema !== undefined) request.outputSchema = extras.outputSchema;
  // After a crash: the child this call started is resumed (or its logged result given), not started again.
  if (takeInterrupted(parent, ctx.callId)) {
    const child = await interruptedChild(deps.brood, parent, ctx.callId, call.background, ctx.context);
    if (child !== undefined) {
      if (!call.background) return foregroundValue(child.id, await untilCancelled(child, ctx.signal));
      if (child.continuable) return continuableValue(child.id);
      return adoptAsJob(deps, parent, call, child, extras.notifyOwner !== false);
    }
  }
  // The child's descriptor records the call that started it (read at the start's synchronous entry).
  return asDelegatingCall(parent.id, ctx.callId, () => startRoute(deps, request, call, ctx, extras));
}

function startRoute(
  deps: DelegationDeps,
  request: Request,
  call: DelegationCall,
  ctx: ToolContext,
  extras: DelegationExtras,
): Promise<unknown> {
  if (!call.background) return foreground(deps, request, ctx.signal);
  if (deps.config.backgroundMode === 'continuable') return continuable(deps, request, call, ctx.signal);
  return oneShotBackground(deps, request, call, ctx.signal, extras.notifyOwner !== false);
}

type Request = Omit<SubagentStartRequest, 'signal'>;

/**
 * §11.5: the call's signal owns start and execution; disposal is always awaited. (The runtime rolls
 * the child's usage into the parent's turn for runs that were not handed to a job, §7.5.)
 */
async function foreground(deps: DelegationDeps, request: Request, signal: AbortSignal): Promise<unknown> {
  const run = await subagentsOf(deps.brood).start(deps.config.provider, { ...request, signal });
  // Returned, not awaited: no suspended frame here while the child runs (one per running child).
  return collect(run).then((outcome) => foregroundOutcome(run, outcome));
}

/** The tool's value for a collected foreground run, or the call's error. */
function foregroundOutcome(run: SubagentRun, outcome: Collected): unknown {
  if (outcome.resultError !== undefined) {
    if (outcome.disposeError === undefined) throw outcome.resultError;
    // Keep the collection failure's code when it has one, like the single-failure path does.
    const message = bothFailedMessage(errorMessage(outcome.resultError), errorMessage(outcome.disposeError));
    throw outcome.resultError instanceof BroodError
      ? new BroodError(outcome.resultError.code, message)
      : new Error(message);
  }
  const result = outcome.result as SubagentResult;
  if (result.stopReason !== 'completed') throw runFailure(result, outcome.disposeError);
  if (outcome.disposeError !== undefined) {
    throw new Error(disposeAfterCompletionMessage(errorMessage(outcome.disposeError)));
  }
  return foregroundValue(run.id, result);
}

/** A completed foreground run's tool value; any other outcome is the call's error. */
function foregroundValue(runId: string, result: SubagentResult): unknown {
  if (result.stopReason !== 'completed') throw runFailure(result, undefined);
  const value: ForegroundValue = { kind: 'foreground', runId, output: [{ type: 'text', text: result.output }] };
  if (result.structured !== undefined) value.structured = result.structured;
  return withContent(value, result.output);
}

/** The call's signal owns a resumed foreground child as it owns a new one: cancelling the call cancels it. */
async function untilCancelled(child: InterruptedChild, signal: AbortSignal): Promise<SubagentResult> {
  const onAbort = (): void => child.cancel();
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await child.result;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

function continuableValue(childId: string): unknown {
  const value: ContinuableValue = { kind: 'continuable', subagentId: childId };
  return withContent(value, `started subagent ${childId}`);
}

/**
 * A background child resumed after a crash: the model never saw its job (the call's result was not
 * logged), so it gets one now, and the job's notice reaches its owner once, when the child is done.
 */
function adoptAsJob(
  deps: DelegationDeps,
  parent: Agent,
  call: DelegationCall,
  child: InterruptedChild,
  notifyOwner: boolean,
): unknown {
  const controller = new AbortController();
  controller.signal.addEventListener('abort', () => child.cancel(), { once: true });
  const run: SubagentRun = { id: child.id, result: child.result, dispose: () => child.dispose() };
  const job = pluginAccess(deps.brood).jobs.create(parent, run, call.description, controller, { notifyOwner });
  const value: BackgroundValue = { kind: 'background', jobId: job.id };
  return withContent(value, `started background subagent job ${job.id}`);
}

interface Collected {
  result?: SubagentResult;
  resultError?: unknown;
  disposeError?: unknown;
}

/** The run's result (or why there is none), then its disposal, always awaited. */
function collect(run: SubagentRun): Promise<Collected> {
  const outcome: Collected = {};
  return Promise.resolve(run.result)
    .then(
      (result) => {
        outcome.result = result;
      },
      (error: unknown) => {
        outcome.resultError = error ?? new Error('the subagent result was rejected');
      },
    )
    .then(() => disposeInto(run, outcome));
}

async function disposeInto(run: SubagentRun, outcome: Collected): Promise<Collected> {
  try {
    await run.dispose();
  } catch (error) {
    outcome.disposeError = error ?? new Error('disposal was rejected');
  }
  return outcome;
}

/** Only a cancelled child carries a code (ABORTED); other failed outcomes are the child's, not ours. */
function runFailure(result: SubagentResult, disposeError: unknown): Error {
  let message = failureMessage(result);
  if (disposeError !== undefined) message += disposeAfterFailureSuffix(errorMessage(disposeError));
  return result.stopReason === 'aborted' ? new BroodError('ABORTED', message) : new ToolAnswerError(message);
}

/**
 * §11.6: the call's signal may cancel the start, but once the job is registered the job owns its
 * own cancellation (job_kill, owner disposal), so a cancelled tool call no longer stops it.
 */
async function oneShotBackground(
  deps: DelegationDeps,
  request: Request,
  call: DelegationCall,
  signal: AbortSignal,
  notifyOwner: boolean,
): Promise<unknown> {
  const controller = new AbortController();
  // Lets the runtime's subagent-start event say 'background' for the run this job will own.
  pluginAccess(deps.brood).markBackgroundStart(controller.signal);
  const stopForwarding = onAbort(signal, () => controller.abort(signal.reason));
  let run: SubagentRun;
  try {
    run = await subagentsOf(deps.brood).start(deps.config.provider, { ...request, signal: controller.signal });
  } finally {
    stopForwarding();
  }
  if (signal.aborted) {
    // The call was cancelled while the child started: nobody will ever learn this job id.
    await run.dispose().catch(() => undefined);
    throw new BroodError('ABORTED', 'the delegation was cancelled before its background job was registered');
  }
  const job = pluginAccess(deps.brood).jobs.create(request.parent, run, call.description, controller, {
    notifyOwner,
  });
  const value: BackgroundValue = { kind: 'background', jobId: job.id };
  return withContent(value, `started background subagent job ${job.id}`);
}

/** §11.7: resolves at inbox acceptance; the runtime delivers the settlement notice itself. */
async function continuable(
  deps: DelegationDeps,
  request: Request,
  call: DelegationCall,
  signal: AbortSignal,
): Promise<unknown> {
  const { reportDelivery, maxReportBytes } = deps.config;
  const { childId } = await subagentsOf(deps.brood).startContinuable({
    provider: deps.config.provider,
    label: call.description,
    request,
    signal,
    ...(reportDelivery === undefined ? {} : { reportDelivery }),
    ...(maxReportBytes === undefined ? {} : { maxReportBytes }),
  });
  const value: ContinuableValue = { kind: 'continuable', subagentId: childId };
  return withContent(value, `started subagent ${childId}`);
}
