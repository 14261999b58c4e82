/** Every error brood raises is a BroodError carrying one of these codes (SPEC §13). */
export const ERROR_CODES = [
  'NO_PROVIDER',
  'DUPLICATE_PROVIDER',
  'UNSUPPORTED_CAPABILITY',
  'INVALID_MAX_DEPTH',
  'INVALID_DEPTH',
  'DEPTH_EXCEEDED',
  'INVALID_TOOL_FILTER',
  'SCOPE_REQUIRED',
  'DUPLICATE_TOOL',
  'RESERVED_TOOL_NAME',
  'UNKNOWN_TOOL',
  'INVALID_ARGS',
  'ABORTED',
  'ABORTED_BEFORE_DISPATCH',
  'DUPLICATE_SECTION',
  'TEMPLATE_ERROR',
  'INVALID_CONFIG',
  'UNKNOWN_MODEL',
  'INVALID_EFFORT',
  'SETUP_FAILED',
  'NOT_RESUMABLE',
  'UNAUTHORIZED',
  'PARENT_UNAVAILABLE',
  'SESSION_CORRUPT',
  'SESSION_LOCKED',
  'DISPOSED',
  'DUPLICATE_VARIABLE',
  'WORKER_CRASHED',
  'MCP_UNAVAILABLE',
  'MCP_ERROR',
  'PROVIDER_FAILED',
  'CODE_LIMIT',
  'QUEUE_UNAVAILABLE',
  'QUEUE_FULL',
  'MISSING_DEPENDENCY',
  'UNKNOWN_APPROVAL',
  'APPROVAL_DENIED',
  'APPROVAL_EXPIRED',
  'INTERNAL',
] as const;

export type BroodErrorCode = (typeof ERROR_CODES)[number];

const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

export function isBroodErrorCode(value: unknown): value is BroodErrorCode {
  return typeof value === 'string' && KNOWN_CODES.has(value);
}

export class BroodError extends Error {
  readonly code: BroodErrorCode;
  readonly details?: Record<string, unknown>;

  constructor(code: BroodErrorCode, message: string, options?: { details?: Record<string, unknown>; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BroodError';
    this.code = code;
    if (options?.details !== undefined) this.details = options.details;
  }
}

/** Normalises anything thrown into a BroodError; foreign errors keep their message and become `fallback`. */
export function toBroodError(error: unknown, fallback: BroodErrorCode = 'INTERNAL'): BroodError {
  if (error instanceof BroodError) return error;
  const code = errorCodeOf(error);
  if (isError(error)) return new BroodError(code ?? fallback, errorMessage(error), { cause: error });
  return new BroodError(fallback, errorMessage(error));
}

/** The BroodError code a thrown value carries, if any; never throws (a `code` getter may). */
export function errorCodeOf(error: unknown): BroodErrorCode | undefined {
  try {
    const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
    return isBroodErrorCode(code) ? code : undefined;
  } catch {
    return undefined;
  }
}

function isError(value: unknown): value is Error {
  try {
    return value instanceof Error;
  } catch {
    return false; // a Proxy whose getPrototypeOf trap throws
  }
}

/** The shape an error takes when it crosses a thread boundary (structured clone drops class identity). */
export interface ErrorEnvelope {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export function encodeError(error: unknown): ErrorEnvelope {
  const broodError = toBroodError(error);
  const envelope: ErrorEnvelope = { code: broodError.code, message: broodError.message };
  if (broodError.details !== undefined) envelope.details = broodError.details;
  return envelope;
}

export function decodeError(envelope: ErrorEnvelope): BroodError {
  const code = isBroodErrorCode(envelope.code) ? envelope.code : 'INTERNAL';
  return new BroodError(
    code,
    envelope.message,
    envelope.details === undefined ? undefined : { details: envelope.details },
  );
}

/**
 * A printable message for anything thrown. Total: tools may throw values whose `message` getter,
 * `toJSON` or `toString` throws, and formatting an error must never become a second error.
 */
export function errorMessage(error: unknown): string {
  try {
    if (isError(error)) {
      const message: unknown = error.message;
      return typeof message === 'string' ? message : safeString(message);
    }
  } catch {
    return unprintable(error);
  }
  return safeString(error);
}

function safeString(value: unknown): string {
  try {
    return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    try {
      return String(value);
    } catch {
      return unprintable(value);
    }
  }
}

function unprintable(value: unknown): string {
  return `a thrown ${value === null ? 'null' : typeof value} that cannot be printed`;
}
