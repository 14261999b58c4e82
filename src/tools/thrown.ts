/**
 * What a tool body's uncoded throw becomes. The model reads `<Name>: <message>` — the error's own name
 * (`TypeError`, a host's `QuotaError`), so it can tell a bug from a refusal — and the host is told the
 * stack through its diagnostic callback, since the model's copy is the only other trace. (Brood's own
 * coded errors are answers, not faults: execute.ts renders them as `Error:` with their code.)
 */
import { errorMessage } from '../errors.js';
import type { ToolResult } from '../types.js';

/** Where a tool's fault is reported (createBrood's onDiagnostic). */
export type ToolFaultSink = (message: string) => void;

/**
 * A failure that is the tool's answer, not a fault: a delegated child that failed, a path outside the
 * CLI tools' root. The model reads `Error: <message>` with no code, and the host is not told.
 */
export class ToolAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Error';
  }
}

export function thrownByTool(tool: string, thrown: unknown, report: ToolFaultSink | undefined): ToolResult {
  const message = errorMessage(thrown);
  const headline = `${nameOf(thrown)}: ${message}`;
  if (!isAnswer(thrown)) report?.(`tool "${tool}" threw ${stackOf(thrown) ?? headline}`);
  return { isError: true, content: headline, error: { message } };
}

/** Even `instanceof` can throw (a revoked proxy): what cannot be asked is a fault, reported like one. */
function isAnswer(thrown: unknown): boolean {
  try {
    return thrown instanceof ToolAnswerError;
  } catch {
    return false;
  }
}

/** The error's `name` when it is a non-empty string; `Error` for anything else (a thrown string, a bad getter). */
function nameOf(thrown: unknown): string {
  try {
    if (!(thrown instanceof Error)) return 'Error';
    const name: unknown = thrown.name;
    return typeof name === 'string' && name.trim() !== '' ? name : 'Error';
  } catch {
    return 'Error';
  }
}

function stackOf(thrown: unknown): string | undefined {
  try {
    if (!(thrown instanceof Error)) return undefined;
    const stack: unknown = thrown.stack;
    return typeof stack === 'string' && stack !== '' ? stack : undefined;
  } catch {
    return undefined;
  }
}
