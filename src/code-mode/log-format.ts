/**
 * Turns a console line encoded inside the engine (sandbox-prelude.ts) back into host values and
 * formats it with `util.format`, so run_code output reads exactly as it did when programs ran in a
 * Node thread ('start 1 { a: 1 }'). Runs in the sandbox thread, on untrusted input: every value is
 * rebuilt from JSON into fresh plain objects (properties defined, never assigned, so a `__proto__`
 * key stays an own property), unknown tags become strings, and nesting is bounded.
 */
import { format } from 'node:util';

const MAX_DECODE_DEPTH = 12;
const MAX_PADDED_STRING = 1 << 20;
const TYPED_ARRAYS: Record<string, new (length: number) => ArrayLike<unknown> & Record<number, unknown>> = {
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
};
const ERRORS: Record<string, ErrorConstructor> = {
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};

type Refs = Map<number, unknown>;

/** `encoded` is the JSON text of an array of encoded arguments. */
export function formatEncodedLog(encoded: string): string {
  const args: unknown = JSON.parse(encoded);
  if (!Array.isArray(args)) return String(args);
  const refs: Refs = new Map();
  return format(...args.map((arg) => decode(arg, refs, 0)));
}

function decode(node: unknown, refs: Refs, depth: number): unknown {
  if (node === null || typeof node !== 'object') return node;
  if (!Array.isArray(node) || typeof node[0] !== 'string' || depth > MAX_DECODE_DEPTH) return '[…]';
  const [tag] = node;
  switch (tag) {
    case 'u':
      return undefined;
    case 'N':
      return Number(node[1]) || (node[1] === '-0' ? -0 : Number.NaN);
    case 'b':
      return safeBigInt(node[1]);
    case 'y':
      return Symbol(typeof node[1] === 'string' ? node[1] : undefined);
    case 'L':
      return longString(node[1], node[2]);
    case 'f':
      return namedFunction(String(node[1]), typeof node[2] === 'string' ? node[2] : '');
    case 'g':
      return undefined;
    case 'h':
      return undefined;
    case 'r':
      return refs.get(Number(node[1])) ?? '[Circular]';
    default:
      return decodeObject(node, refs, depth);
  }
}

function decodeObject(node: unknown[], refs: Refs, depth: number): unknown {
  const [tag, id] = node;
  switch (tag) {
    case 'a':
      return decodeArray(node, refs, depth);
    case 'e':
      return remember(refs, id, rebuildError(String(node[2]), String(node[3]), String(node[4])));
    case 'd':
      return remember(refs, id, new Date(Number(node[2])));
    case 'x':
      return remember(refs, id, safeRegExp(String(node[2]), String(node[3])));
    case 'm': {
      const map = remember(refs, id, new Map<unknown, unknown>());
      for (const entry of asArray(node[3])) {
        const [key, value] = asArray(entry);
        map.set(decode(key, refs, depth + 1), decode(value, refs, depth + 1));
      }
      return map;
    }
    case 's': {
      const set = remember(refs, id, new Set<unknown>());
      for (const item of asArray(node[3])) set.add(decode(item, refs, depth + 1));
      return set;
    }
    case 't':
      return decodeTyped(node, refs, depth);
    case 'o':
      return decodePlain(node, refs, depth);
    default:
      return `[${String(tag)}]`;
  }
}

function decodeArray(node: unknown[], refs: Refs, depth: number): unknown[] {
  const array = remember(refs, node[1], [] as unknown[]);
  const items = asArray(node[3]);
  items.forEach((item, index) => {
    const isHole = Array.isArray(item) && item[0] === 'h';
    if (!isHole) define(array, index, decodeSlot(item, refs, depth));
  });
  // util.inspect prints "... N more items" from the length; the tail itself is never shown.
  const length = Number(node[2]);
  if (Number.isSafeInteger(length) && length > items.length && length < 2 ** 32) array.length = length;
  return array;
}

function decodeTyped(node: unknown[], refs: Refs, depth: number): unknown {
  const Ctor = TYPED_ARRAYS[String(node[2])];
  const items = asArray(node[4]);
  if (Ctor === undefined)
    return remember(
      refs,
      node[1],
      items.map((item) => decode(item, refs, depth + 1)),
    );
  const typed = remember(refs, node[1], new Ctor(items.length));
  items.forEach((item, index) => {
    typed[index] = decode(item, refs, depth + 1);
  });
  return typed;
}

function decodePlain(node: unknown[], refs: Refs, depth: number): object {
  const name = node[2];
  const target = remember(
    refs,
    node[1],
    name === null ? Object.create(null) : typeof name === 'string' && name !== 'Object' ? instanceOf(name) : {},
  );
  for (const prop of asArray(node[3])) {
    const [rawKey, value] = asArray(prop);
    const key =
      Array.isArray(rawKey) && rawKey[0] === 'y'
        ? Symbol(typeof rawKey[1] === 'string' ? rawKey[1] : undefined)
        : String(rawKey);
    define(target, key, decodeSlot(value, refs, depth));
  }
  return target;
}

/** A property slot: a value, or an accessor that util.inspect shows as [Getter] / [Setter] without calling it. */
function decodeSlot(value: unknown, refs: Refs, depth: number): PropertyDescriptor {
  if (Array.isArray(value) && value[0] === 'g') {
    const accessor: PropertyDescriptor = { enumerable: true, configurable: true };
    if (value[1] === true) accessor.get = () => undefined;
    if (value[2] === true) accessor.set = () => undefined;
    if (accessor.get === undefined && accessor.set === undefined) accessor.get = () => undefined;
    return accessor;
  }
  return { value: decode(value, refs, depth + 1), enumerable: true, writable: true, configurable: true };
}

function define(target: object, key: PropertyKey, descriptor: PropertyDescriptor): void {
  Object.defineProperty(target, key, descriptor);
}

function remember<T>(refs: Refs, id: unknown, value: T): T {
  refs.set(Number(id), value);
  return value;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** An object whose constructor has `name`, so util.inspect prints `Name { ... }`. */
function instanceOf(name: string): object {
  // biome-ignore lint/complexity/useArrowFunction: an arrow function has no prototype, and this needs one
  const ctor = function () {} as unknown as { prototype: object };
  Object.defineProperty(ctor, 'name', { value: name });
  return Object.create(ctor.prototype) as object;
}

function namedFunction(kind: string, name: string): unknown {
  const fn =
    kind === 'class'
      ? class {}
      : kind === 'async'
        ? async () => undefined
        : kind === 'gen'
          ? function* () {}
          : kind === 'asyncgen'
            ? async function* () {}
            : () => undefined;
  Object.defineProperty(fn, 'name', { value: name });
  return fn;
}

function rebuildError(name: string, message: string, stack: string): Error {
  const error = new (ERRORS[name] ?? Error)(message);
  if (!(name in ERRORS))
    Object.defineProperty(error, 'name', { value: name, enumerable: false, configurable: true, writable: true });
  error.stack = `${name}${message === '' ? '' : `: ${message}`}\n${stack}`.trimEnd();
  return error;
}

function longString(prefix: unknown, length: unknown): string {
  const head = String(prefix);
  const total = Number(length);
  // Padding lets util.inspect print the real "... N more characters"; the padding is never shown.
  if (!Number.isSafeInteger(total) || total <= head.length || total - head.length > MAX_PADDED_STRING) return head;
  return head + ' '.repeat(total - head.length);
}

function safeBigInt(text: unknown): unknown {
  try {
    return BigInt(String(text));
  } catch {
    return String(text);
  }
}

function safeRegExp(source: string, flags: string): unknown {
  try {
    return new RegExp(source, flags);
  } catch {
    return `/${source}/${flags}`;
  }
}
