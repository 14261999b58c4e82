/**
 * Messages between a driver's thread and one of its run_code sandbox threads (each hosts one QuickJS
 * engine and runs one program at a time). Both sides validate what they receive.
 *
 * The control buffer is shared between the two threads only (never with the engine): the sandbox
 * thread writes when the engine entered the program (0 while it awaits tool calls), so the driver
 * can stop a thread stuck in engine code that does not poll the interrupt handler; the driver sets
 * the stop cell to make the interrupt handler end a running program at once.
 */

export interface ProgramLimits {
  busyMs: number;
  wallMs: number;
  maxOutputBytes: number;
  maxToolCalls: number;
}

/** Fixed per sandbox thread: the engine's memory and the thread's native stack are sized at start. */
export interface EngineSpec {
  memoryMb: number;
  stackKb: number;
}

export const CONTROL_BYTES = 16;
/** BigInt64 index: Date.now() when the engine was entered, 0n while it is not running. */
export const RUNNING_SINCE = 0;
/** Int32 index (after the BigInt64 cell): non-zero asks the interrupt handler to stop the program. */
export const STOP_REQUESTED = 2;

export type ToSandbox =
  | { type: 'run'; code: string; limits: ProgramLimits }
  /**
   * A tool call's answer: when ok, `text` (a string result as it is) or `json` (any other result
   * value as JSON text); else the tool's `message`.
   */
  | { type: 'reply'; id: number; ok: boolean; json?: string; text?: string; message?: string }
  | { type: 'stop' };

/**
 * Checks a message from the driver's thread. Hand-written: the sandbox thread loads no validation
 * library, which keeps its start-up short (the driver side validates with zod, sandbox-messages.ts).
 */
export function parseToSandbox(raw: unknown): ToSandbox | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const message = raw as Record<string, unknown>;
  if (message.type === 'stop') return { type: 'stop' };
  if (message.type === 'reply') {
    if (typeof message.id !== 'number' || typeof message.ok !== 'boolean') return undefined;
    const reply: ToSandbox = { type: 'reply', id: message.id, ok: message.ok };
    if (typeof message.json === 'string') reply.json = message.json;
    if (typeof message.text === 'string') reply.text = message.text;
    if (typeof message.message === 'string') reply.message = message.message;
    return reply;
  }
  if (message.type === 'run' && typeof message.code === 'string' && validLimits(message.limits))
    return { type: 'run', code: message.code, limits: message.limits };
  return undefined;
}

function validLimits(value: unknown): value is ProgramLimits {
  if (typeof value !== 'object' || value === null) return false;
  const limits = value as Record<string, unknown>;
  return ['busyMs', 'wallMs', 'maxOutputBytes', 'maxToolCalls'].every(
    (key) => typeof limits[key] === 'number' && (limits[key] as number) > 0,
  );
}

/** Which limit ended a program: part of the errored result (`error.details.limit`). */
export const LIMIT_NAMES = ['busy', 'wall', 'memory', 'stack', 'output', 'toolCalls'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** A tool call the program made: the id its answer (`reply`) names, the tool, its arguments as JSON. */
export interface ToolCallOut {
  id: number;
  name: string;
  args: string;
}

export type FromSandbox =
  | { type: 'ready' }
  | { type: 'log'; line: string }
  /**
   * After each stretch the program ran (that did not end it): the tool calls it made, and how many
   * replies it took since the last report, which is what lets the driver send it more.
   */
  | { type: 'calls'; calls: ToolCallOut[]; taken: number }
  | ProgramEnd;

export interface ProgramEnd {
  type: 'end';
  ok: boolean;
  text?: string;
  message?: string;
  limit?: LimitName;
  aborted?: boolean;
  /** false when the engine may be damaged (a trap or a host stack overflow inside it): the thread is retired. */
  reusable: boolean;
}
