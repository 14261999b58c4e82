/**
 * Tool execution and classification (SPEC §4 rules 6–7). `executeResolved` always resolves with
 * exactly one ToolResult: every failure becomes `{ isError: true, content: 'Error: …', error }` (a tool
 * body's own throw keeps its error's name, see thrown.ts), because a tool failure is information for the
 * model, not a crash of the caller.
 */
import { BroodError, type BroodErrorCode, errorCodeOf, errorMessage } from '../errors.js';
import type { MessagePart } from '../models/content-parts.js';
import type { Agent, ConcurrencyClass, ToolCallRequest, ToolContext, ToolResult } from '../types.js';
import { describe } from '../util/describe.js';
import { defaultIds } from '../util/ids.js';
import { type Cancellation, LazyAbortController } from '../util/lazy-abort.js';
import { readUntrusted } from '../util/untrusted.js';
import {
  afterCall,
  beforeCall,
  errorText,
  type HookedToolCall,
  HookFailure,
  hookFailed,
  type ToolHooks,
} from './hooks.js';
import type { ResolvedTool } from './resolver.js';
import { type ToolFaultSink, thrownByTool } from './thrown.js';

export type { ConcurrencyClass };

/** What a scope supplies for one call: the live lookup and the agent the call runs as. */
export interface ExecutionScope {
  lookup(name: string): ResolvedTool | undefined;
  agent(): Agent | undefined;
  /** Told the stack of a tool body's throw (the model reads only its name and message). */
  reportFault?: ToolFaultSink;
  /** createBrood's hooks: they see the calls of a scope that runs as an agent (hooks.ts). */
  hooks?: ToolHooks;
}

/** A call as the runtime makes it: a turn's call carries the turn's cancellation (see util/lazy-abort.ts). */
export type ScopedCall = Omit<ToolCallRequest, 'signal'> & { signal?: AbortSignal | LazyAbortController };

/**
 * Plain promise chains rather than async functions down to the tool's body: a call that waits (a
 * delegation waits for its whole child) would otherwise hold a suspended frame per level, and a wide
 * fan-out holds one such call per running child.
 */
export function executeResolved(scope: ExecutionScope, call: ScopedCall): Promise<ToolResult> {
  try {
    return runCall(scope, call).catch(defectResult);
  } catch (error) {
    return Promise.resolve(defectResult(error));
  }
}

/** Only reachable through a defect in this module; the contract is still "resolve, never reject". */
function defectResult(error: unknown): ToolResult {
  return errorResult(codeOf(error) ?? 'INTERNAL', errorMessage(error));
}

function runCall(scope: ExecutionScope, untrusted: ScopedCall): Promise<ToolResult> {
  // A host's call object: its fields are read once (a throwing getter is INVALID_ARGS, like bad args).
  const call = readUntrusted('INVALID_ARGS', 'a tool call', () => ({
    name: untrusted?.name,
    arguments: untrusted?.arguments,
    signal: untrusted?.signal,
    callId: untrusted?.callId,
    context: untrusted?.context,
  }));
  const name = typeof call.name === 'string' ? call.name : describe(call.name);
  const tool = scope.lookup(name);
  if (tool === undefined) return Promise.resolve(errorResult('UNKNOWN_TOOL', unknownToolMessage(name)));
  let args: unknown;
  try {
    args = tool.definition.parse(parseArguments(name, call.arguments));
  } catch (error) {
    return Promise.resolve(errorResult('INVALID_ARGS', errorMessage(error)));
  }
  const cancel: Cancellation = call.signal ?? new AbortController().signal;
  if (cancel.aborted) {
    return Promise.resolve(
      errorResult('ABORTED_BEFORE_DISPATCH', `Tool "${name}" was not started: the call was aborted`),
    );
  }
  const ctx = toolContext(call.callId ?? defaultIds('call'), scope.agent(), cancel);
  if (call.context !== undefined) ctx.context = call.context;
  const hooked = hookedCall(scope, name, args, ctx);
  if (hooked === undefined) return runBody(scope, tool, name, args, ctx, cancel);
  return runHooked(scope, tool, hooked, args, ctx, cancel);
}

/**
 * A call's context. A turn's cancellation makes its AbortSignal only when the tool (or a hook, or an
 * approval policy) reads `ctx.signal`: most never do, and a wide fan-out runs a turn per child.
 */
export function toolContext(callId: string, agent: Agent | undefined, cancel: Cancellation): ToolContext {
  if (!(cancel instanceof LazyAbortController)) return { callId, agent, signal: cancel as AbortSignal };
  return {
    callId,
    agent,
    get signal() {
      return cancel.signal;
    },
  };
}

/** A call through createBrood's hooks: before, the body, after (each may rewrite or answer). */
async function runHooked(
  scope: ExecutionScope,
  tool: ResolvedTool,
  hooked: { hooks: ToolHooks; call: HookedToolCall },
  parsed: unknown,
  ctx: ToolContext,
  cancel: Cancellation,
): Promise<ToolResult> {
  const { name } = hooked.call;
  let args = parsed;
  try {
    const before = await beforeCall(hooked.hooks, hooked.call, ctx);
    if (!before.run) return before.result;
    if (before.arguments !== args) {
      try {
        args = tool.definition.parse(before.arguments);
      } catch (error) {
        return errorResult('INVALID_ARGS', `beforeToolCall rewrote the arguments: ${errorMessage(error)}`);
      }
    }
    const call = { ...hooked.call, arguments: args };
    const result = await runBody(scope, tool, name, args, ctx, cancel, (thrown) =>
      errorText(hooked.hooks, thrown, call, ctx),
    );
    const read = await afterCall(hooked.hooks, call, result, ctx);
    return call.arguments === hooked.call.arguments ? read : { ...read, rewrittenArguments: jsonOf(call.arguments) };
  } catch (error) {
    if (error instanceof HookFailure) return hookFailed(error, name, scope.reportFault);
    throw error;
  }
}

function jsonOf(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch (error) {
    return `(not JSON: ${errorMessage(error)})`;
  }
}

/** The call as hooks see it, when the scope has hooks and runs as an agent. */
function hookedCall(
  scope: ExecutionScope,
  name: string,
  args: unknown,
  ctx: ToolContext,
): { hooks: ToolHooks; call: HookedToolCall } | undefined {
  const { hooks } = scope;
  const agent = ctx.agent;
  if (hooks === undefined || agent === undefined) return undefined;
  return { hooks, call: { name, arguments: args, callId: ctx.callId, agentId: agent.id, depth: agent.depth } };
}

/** The tool's body; `word` may give the text the model reads for an uncoded throw. */
function runBody(
  scope: ExecutionScope,
  tool: ResolvedTool,
  name: string,
  args: unknown,
  ctx: ToolContext,
  cancel: Cancellation,
  word?: (thrown: unknown) => Promise<string | undefined>,
): Promise<ToolResult> {
  let running: unknown;
  try {
    running = tool.definition.execute(args, ctx);
  } catch (error) {
    return bodyThrew(scope, name, error, word);
  }
  return Promise.resolve(running).then(
    (value) =>
      cancel.aborted ? errorResult('ABORTED', `Tool "${name}" was aborted while running`) : successResult(name, value),
    (error: unknown) => bodyThrew(scope, name, error, word),
  );
}

async function bodyThrew(
  scope: ExecutionScope,
  name: string,
  error: unknown,
  word: ((thrown: unknown) => Promise<string | undefined>) | undefined,
): Promise<ToolResult> {
  const worded = await word?.(error);
  const code = codeOf(error);
  // The worded text is also what a run_code program's catch reads (it takes the error's message).
  if (worded !== undefined)
    return { isError: true, content: worded, error: { ...(code ? { code } : {}), message: worded } };
  return code === undefined ? thrownByTool(name, error, scope.reportFault) : errorResult(code, errorMessage(error));
}

export function unknownToolMessage(name: string): string {
  return `Unknown tool "${name}": it is not available in this scope`;
}

/** Strings are model output and may be malformed JSON; that is the model's error, not ours. */
export function parseArguments(name: string, raw: unknown): unknown {
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch (error) {
    throw new BroodError(
      'INVALID_ARGS',
      `Invalid arguments for tool "${name}": not valid JSON (${errorMessage(error)})`,
    );
  }
}

/**
 * Rule 7: parallel only when concurrencySafe is `true` or returns exactly `true` for the parsed
 * arguments. Anything uncertain (unknown tool, bad arguments, a throwing predicate) is exclusive,
 * because the safe default for a barrier is to keep it.
 */
export function classifyResolved(tool: ResolvedTool | undefined, rawArgs: unknown): ConcurrencyClass {
  if (tool === undefined) return 'exclusive';
  const safe = tool.definition.concurrencySafe;
  if (safe === undefined || safe === false) return 'exclusive';
  let args: unknown;
  try {
    args = tool.definition.parse(parseArguments(tool.name, rawArgs));
  } catch {
    return 'exclusive';
  }
  if (safe === true) return 'parallel';
  try {
    return safe(args) === true ? 'parallel' : 'exclusive';
  } catch {
    return 'exclusive';
  }
}

export function errorResult(code: BroodErrorCode | undefined, message: string): ToolResult {
  const error: { code?: string; message: string } = { message };
  if (code !== undefined) error.code = code;
  return { isError: true, content: `Error: ${message}`, error };
}

const CONTENT: unique symbol = Symbol('brood.toolContent');
const PARTS: unique symbol = Symbol('brood.toolParts');

/** A tool return value that carries its own rendering; see `withContent`. */
export interface RenderedValue {
  readonly [CONTENT]: string;
  /** The rendering's content parts when it has media (an MCP tool's image); CONTENT is their text. */
  readonly [PARTS]?: MessagePart[];
  readonly value: unknown;
}

/**
 * Lets a tool keep a structured `value` while the model sees `content` (e.g. the delegation tool's
 * `{ kind: 'foreground', ... }` rendered as the child's final text). Without it, content is always
 * derived from the value (rule 6), which would show the model JSON instead of the answer.
 */
export function withContent(value: unknown, content: string, parts?: MessagePart[]): RenderedValue {
  return parts === undefined ? { [CONTENT]: content, value } : { [CONTENT]: content, [PARTS]: parts, value };
}

function isRendered(value: unknown): value is RenderedValue {
  return typeof value === 'object' && value !== null && CONTENT in value;
}

/** Rule 6: strings as is, undefined as '', everything else as compact JSON; the raw value is kept. */
function successResult(name: string, value: unknown): ToolResult {
  if (isRendered(value)) {
    const rendered: ToolResult = { isError: false, content: value[CONTENT] };
    const parts = value[PARTS];
    if (parts !== undefined) rendered.parts = parts;
    if (value.value !== undefined) rendered.value = value.value;
    return rendered;
  }
  let content: string;
  try {
    content = typeof value === 'string' ? value : value === undefined ? '' : (JSON.stringify(value) ?? '');
  } catch (error) {
    return errorResult('INTERNAL', `Tool "${name}" returned a value that is not JSON: ${errorMessage(error)}`);
  }
  const result: ToolResult = { isError: false, content };
  if (value !== undefined) result.value = value;
  return result;
}

function codeOf(error: unknown): BroodErrorCode | undefined {
  return errorCodeOf(error);
}
