/**
 * Hand-written value checks for the model-response boundary (src/driver/response-check.ts; wire
 * messages are declared once in src/wire/protocol.ts with src/declare.ts instead). Each
 * mirrors zod's rule for the schema it stands beside, and the callers' property tests hold them to
 * those schemas: zod stays the contract and words the refusals, these only keep it off the hot path.
 */
export type Check = (value: unknown) => boolean;

export const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
export const isStr = (v: unknown): v is string => typeof v === 'string';
export const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
export const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
export const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
export const optional =
  (check: Check): Check =>
  (v) =>
    v === undefined || check(v);
export const oneOf =
  (...values: readonly unknown[]): Check =>
  (v) =>
    values.includes(v);
/** Index by index, like zod: a hole in a sparse array (which structured clone keeps) is `undefined`. */
export const arrayOf =
  (check: Check): Check =>
  (v) => {
    if (!Array.isArray(v)) return false;
    for (let index = 0; index < v.length; index += 1) if (!check(v[index])) return false;
    return true;
  };
/** zod's record rule: a plain object (a null prototype, or an Object-like constructor). */
export function isRecord(v: unknown): v is Record<string, unknown> {
  if (!isObj(v)) return false;
  const ctor = (v as { constructor?: unknown }).constructor;
  if (ctor === undefined || typeof ctor !== 'function') return true;
  const proto = (ctor as { prototype?: unknown }).prototype;
  return isObj(proto) && Object.hasOwn(proto, 'isPrototypeOf');
}

// ——— model shapes shared by the wire and the response check ———
const isCount: Check = (v) => isNum(v) && v >= 0;
export const isUsage: Check = (v) =>
  isObj(v) &&
  isCount(v.inputTokens) &&
  isCount(v.outputTokens) &&
  optional(isCount)(v.cacheReadTokens) &&
  optional(isCount)(v.cacheWriteTokens) &&
  optional(isCount)(v.reasoningTokens);
export const isToolCall: Check = (v) =>
  isObj(v) && isStr(v.callId) && v.callId !== '' && isStr(v.name) && v.name !== '' && isStr(v.arguments);
export const isReasoningBlock: Check = (v) =>
  isObj(v) &&
  ((v.type === 'thinking' && isStr(v.thinking) && isStr(v.signature)) ||
    (v.type === 'redacted_thinking' && isStr(v.data)));
