/**
 * Tools that resume an interrupted call themselves. After a crash, a call whose `tool/call` was
 * logged with no result normally gets TOOL_OUTCOME_UNKNOWN (or runs again, if idempotent); a tool
 * registered here instead runs with its call marked interrupted, and finds what the first run
 * started (the delegation tool waits for the child that call created, src/delegation/resume.ts).
 */
import type { ToolDefinition } from '../types.js';

const selfResuming = new WeakSet<ToolDefinition>();
/** Per calling agent: the call ids a resumed turn handed to a self-resuming tool, each taken once. */
const marked = new WeakMap<object, Set<string>>();

export function resumesInterruptedCalls(definition: ToolDefinition): ToolDefinition {
  selfResuming.add(definition);
  return definition;
}

export function isSelfResuming(definition: ToolDefinition): boolean {
  return selfResuming.has(definition);
}

export function markInterrupted(agent: object, callId: string): void {
  let calls = marked.get(agent);
  if (calls === undefined) {
    calls = new Set();
    marked.set(agent, calls);
  }
  calls.add(callId);
}

/** True once for a call marked interrupted (the tool body asks when it starts). */
export function takeInterrupted(agent: object | undefined, callId: string): boolean {
  if (agent === undefined) return false;
  return marked.get(agent)?.delete(callId) === true;
}
