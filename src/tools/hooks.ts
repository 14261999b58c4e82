/**
 * createBrood's tool-call hooks, run in the parent on the resolver's path of an agent's calls (the
 * model's own and run_code's alike), after the approval gate: a call the gate refused or a human
 * denied never reaches here. `beforeToolCall` may rewrite the arguments (validated again) or answer
 * in the tool's place; `afterToolCall` may rewrite what the model reads; `onToolError` words a
 * body's throw. A hook that throws or answers with a shape it may not fails that one call (the
 * model reads its message) and the host hears its stack through onDiagnostic.
 */
import { errorMessage } from '../errors.js';
import { type ContentPart, checkInput, type MessagePart, textWithPlaceholders } from '../models/content-parts.js';
import type { ToolContext, ToolResult } from '../types.js';
import type { ToolFaultSink } from './thrown.js';

/** A call as the hooks see it: the parsed arguments, the agent that made it and that agent's depth. */
export interface HookedToolCall {
  name: string;
  arguments: unknown;
  callId: string;
  agentId: string;
  depth: number;
}

/** What the model reads of a call: text, or content parts when it has media (an MCP tool's image). */
export interface HookedToolResult {
  content: string | ContentPart[];
  isError: boolean;
}

/** An answer in the tool's place: the tool does not run. */
export interface ToolCallShortCircuit {
  result: string | ContentPart[];
  isError?: boolean;
}

export interface ToolHooks {
  beforeToolCall?: (
    call: HookedToolCall,
    ctx: ToolContext,
  ) => HookedToolCall | ToolCallShortCircuit | undefined | Promise<HookedToolCall | ToolCallShortCircuit | undefined>;
  afterToolCall?: (
    call: HookedToolCall,
    result: HookedToolResult,
    ctx: ToolContext,
  ) => HookedToolResult | undefined | Promise<HookedToolResult | undefined>;
  onToolError?: (
    error: unknown,
    call: HookedToolCall,
    ctx: ToolContext,
  ) => string | undefined | Promise<string | undefined>;
}

/** What `beforeToolCall` decided: run (with these arguments) or answer without running. */
export type BeforeOutcome = { run: true; arguments: unknown } | { run: false; result: ToolResult };

/** A hook's own failure: the call fails with the hook's message. */
export class HookFailure extends Error {
  constructor(
    readonly hook: keyof ToolHooks,
    readonly thrown: unknown,
  ) {
    super(errorMessage(thrown));
  }
}

export async function beforeCall(hooks: ToolHooks, call: HookedToolCall, ctx: ToolContext): Promise<BeforeOutcome> {
  const hook = hooks.beforeToolCall;
  if (hook === undefined) return { run: true, arguments: call.arguments };
  const answer = await invoke('beforeToolCall', () => hook({ ...call }, ctx));
  if (answer === undefined || answer === null) return { run: true, arguments: call.arguments };
  if (typeof answer !== 'object') throw shapeFailure('beforeToolCall', 'a call, { result } or nothing');
  if ('result' in answer) {
    const { result, isError } = answer;
    if (isError !== undefined && typeof isError !== 'boolean')
      throw shapeFailure('beforeToolCall', 'a boolean isError');
    return { run: false, result: hookResult(hookContent('beforeToolCall', result), isError === true) };
  }
  if (!('arguments' in answer)) throw shapeFailure('beforeToolCall', 'a call, { result } or nothing');
  return { run: true, arguments: answer.arguments };
}

/** The result the model reads after `afterToolCall` (the tool's own value is dropped when rewritten). */
export async function afterCall(
  hooks: ToolHooks,
  call: HookedToolCall,
  result: ToolResult,
  ctx: ToolContext,
): Promise<ToolResult> {
  const hook = hooks.afterToolCall;
  if (hook === undefined) return result;
  const answer = await invoke('afterToolCall', () =>
    hook(call, { content: result.parts ?? result.content, isError: result.isError }, ctx),
  );
  if (answer === undefined || answer === null) return result;
  if (typeof answer !== 'object' || typeof answer.isError !== 'boolean')
    throw shapeFailure('afterToolCall', '{ content, isError: boolean } or nothing');
  const rewritten = hookResult(hookContent('afterToolCall', answer.content), answer.isError);
  const code = result.error?.code;
  if (rewritten.error && code !== undefined) rewritten.error.code = code;
  return rewritten;
}

/** The text `onToolError` gives the model for a body's throw; undefined leaves the default wording. */
export async function errorText(
  hooks: ToolHooks,
  thrown: unknown,
  call: HookedToolCall,
  ctx: ToolContext,
): Promise<string | undefined> {
  const hook = hooks.onToolError;
  if (hook === undefined) return undefined;
  const answer = await invoke('onToolError', () => hook(thrown, call, ctx));
  if (answer === undefined || answer === null) return undefined;
  if (typeof answer !== 'string') throw shapeFailure('onToolError', 'a string or nothing');
  return answer;
}

/** A failed hook as the call's result; the host hears the stack. */
export function hookFailed(failure: HookFailure, tool: string, report: ToolFaultSink | undefined): ToolResult {
  report?.(`${failure.hook} hook threw on tool "${tool}": ${stackOf(failure.thrown) ?? failure.message}`);
  return hookResult({ text: `Error: ${failure.message}` }, true);
}

/** A host error's stack, if reading it does not throw (a getter may). */
function stackOf(thrown: unknown): string | undefined {
  try {
    return thrown instanceof Error && typeof thrown.stack === 'string' ? thrown.stack : undefined;
  } catch {
    return undefined;
  }
}

/** A hook's content as the model reads it: checked like a host's message (a bad part fails the call). */
function hookContent(hook: keyof ToolHooks, content: unknown): { text: string; parts?: MessagePart[] } {
  if (typeof content === 'string') return { text: content };
  let checked: ReturnType<typeof checkInput>;
  try {
    checked = checkInput(content);
  } catch (error) {
    throw new HookFailure(
      hook,
      new TypeError(`${hook} returned content that is not a string or content parts: ${errorMessage(error)}`),
    );
  }
  return checked.parts === undefined ? checked : { text: textWithPlaceholders(checked.parts), parts: checked.parts };
}

function hookResult(content: { text: string; parts?: MessagePart[] }, isError: boolean): ToolResult {
  const { text, parts } = content;
  const result: ToolResult = isError
    ? { isError, content: text, error: { message: text } }
    : { isError, content: text };
  if (parts !== undefined) result.parts = parts;
  return result;
}

async function invoke<T>(hook: keyof ToolHooks, run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new HookFailure(hook, error);
  }
}

function shapeFailure(hook: keyof ToolHooks, expected: string): HookFailure {
  return new HookFailure(hook, new TypeError(`${hook} returned a value that is not ${expected}`));
}
