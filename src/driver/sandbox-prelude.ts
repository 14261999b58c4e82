/**
 * The script a run_code engine evaluates before the model's program (SPEC §4 rule 8). It is a
 * function of four host callbacks and returns `[run(code), settle(id, ok, payload, text)]`. Inside the
 * engine it builds `tools` (a proxy whose members call `hostCall(name, argumentsJson)`, which
 * returns the call's id; the host answers through `settle`; engine-side promises are several times
 * cheaper than host-created ones), `console` (whose lines are encoded for
 * the host's `util.format`, see log-format.ts) and runs the program as the body of an async function
 * with only those two in scope.
 *
 * Nothing here is a security boundary: the program can break these helpers (e.g. by patching
 * Array.prototype), which only garbles its own output. The boundary is the four host callbacks,
 * which accept strings only and check every one (quickjs-program.ts). The intrinsics are captured
 * first so that an ordinary program that shadows or patches them still gets faithful logs.
 * A plain template literal: an escape written here is decoded by this file (write `\\n` for `\n` in the sandbox).
 */
export const SANDBOX_PRELUDE = `(function (hostCall, hostLog, hostDone, hostFail) {
  'use strict';
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const apply = Reflect.apply;
  const ownKeys = Reflect.ownKeys;
  const getProto = Object.getPrototypeOf;
  const getDesc = Object.getOwnPropertyDescriptor;
  const isArray = Array.isArray;
  const create = Object.create;
  const freeze = Object.freeze;
  const StringOf = String;
  const ErrorCtor = Error;
  const MapCtor = Map;
  const then = Promise.prototype.then;
  const PromiseCtor = Promise;
  const reject = (e) => PromiseCtor.reject(e);
  const fnToString = Function.prototype.toString;
  const dateTime = Date.prototype.getTime;
  const mapEntries = Map.prototype.entries;
  const mapSize = getDesc(Map.prototype, 'size').get;
  const setValues = Set.prototype.values;
  const setSize = getDesc(Set.prototype, 'size').get;
  const mapSet = Map.prototype.set;
  const mapGet = Map.prototype.get;
  const iterNext = (it) => it.next();
  const symbolDescription = getDesc(Symbol.prototype, 'description').get;
  const typedArrayProto = getProto(Uint8Array.prototype);
  const typedLength = getDesc(typedArrayProto, 'length').get;
  const typedTag = getDesc(typedArrayProto, Symbol.toStringTag).get;
  const AsyncFunction = (async function () {}).constructor;
  const protoOf = { Date: Date.prototype, RegExp: RegExp.prototype, Map: Map.prototype, Set: Set.prototype, Error: Error.prototype };
  const regexpSource = getDesc(RegExp.prototype, 'source').get;
  const regexpFlags = getDesc(RegExp.prototype, 'flags').get;
  const fnKinds = [
    [getProto(async function () {}), 'async'],
    [getProto(function* () {}), 'gen'],
    [getProto(async function* () {}), 'asyncgen'],
  ];
  // util.inspect shows 3 levels (console.log) and %o 4; deeper values only need a shell.
  const MAX_DEPTH = 6;
  const MAX_ITEMS = 100;
  const MAX_NESTED_STRING = 10000;

  const inherits = (value, proto) => {
    for (let p = getProto(value); p !== null; p = getProto(p)) if (p === proto) return true;
    return false;
  };
  const ctorName = (value) => {
    const proto = getProto(value);
    if (proto === null) return null;
    for (let p = proto; p !== null; p = getProto(p)) {
      const desc = getDesc(p, 'constructor');
      if (desc !== undefined && typeof desc.value === 'function' && typeof desc.value.name === 'string' && desc.value.name !== '') return desc.value.name;
    }
    return 'Object';
  };
  const fnKind = (fn) => {
    const proto = getProto(fn);
    for (const [p, kind] of fnKinds) if (proto === p) return kind;
    let text = '';
    try { text = apply(fnToString, fn, []); } catch {}
    return text.startsWith('class') ? 'class' : 'fn';
  };

  // Tagged tree: plain JSON for strings, finite numbers, booleans and null; arrays tagged by their
  // first element otherwise. Objects carry an id so cycles and shared references survive.
  function encode(value, depth, seen) {
    switch (typeof value) {
      case 'string':
        return depth > 0 && value.length > MAX_NESTED_STRING ? ['L', value.slice(0, MAX_NESTED_STRING), value.length] : value;
      case 'number':
        if (value !== value) return ['N', 'NaN'];
        if (value === Infinity) return ['N', 'Infinity'];
        if (value === -Infinity) return ['N', '-Infinity'];
        if (value === 0 && 1 / value < 0) return ['N', '-0'];
        return value;
      case 'boolean':
        return value;
      case 'undefined':
        return ['u'];
      case 'bigint':
        return ['b', StringOf(value)];
      case 'symbol':
        return ['y', apply(symbolDescription, value, []) ?? null];
      case 'function': {
        let name = '';
        try { const d = getDesc(value, 'name'); if (d && typeof d.value === 'string') name = d.value; } catch {}
        return ['f', fnKind(value), name];
      }
    }
    if (value === null) return null;
    const known = apply(mapGet, seen, [value]);
    if (known !== undefined) return ['r', known];
    const id = seen.size + 1;
    apply(mapSet, seen, [value, id]);
    try {
      return encodeObject(value, depth, seen, id);
    } catch {
      return ['o', id, 'Object', []];
    }
  }

  function encodeObject(value, depth, seen, id) {
    const shell = depth >= MAX_DEPTH;
    if (isArray(value)) {
      const items = [];
      // One past what util.inspect shows: it looks at that item to choose how to align number columns.
      const count = shell ? 0 : Math.min(value.length, MAX_ITEMS + 1);
      for (let i = 0; i < count; i++) items[i] = getDesc(value, i) === undefined ? ['h'] : encodeProperty(value, i, depth, seen);
      return ['a', id, value.length, items];
    }
    if (inherits(value, protoOf.Error)) {
      return ['e', id, StringOf(value.name), StringOf(value.message), typeof value.stack === 'string' ? value.stack : ''];
    }
    if (inherits(value, protoOf.Date)) return ['d', id, apply(dateTime, value, [])];
    if (inherits(value, protoOf.RegExp)) return ['x', id, apply(regexpSource, value, []), apply(regexpFlags, value, [])];
    if (inherits(value, protoOf.Map)) {
      const entries = [];
      if (!shell) {
        const it = apply(mapEntries, value, []);
        for (let step = iterNext(it); !step.done && entries.length < MAX_ITEMS; step = iterNext(it)) {
          entries[entries.length] = [encode(step.value[0], depth + 1, seen), encode(step.value[1], depth + 1, seen)];
        }
      }
      return ['m', id, apply(mapSize, value, []), entries];
    }
    if (inherits(value, protoOf.Set)) {
      const items = [];
      if (!shell) {
        const it = apply(setValues, value, []);
        for (let step = iterNext(it); !step.done && items.length < MAX_ITEMS; step = iterNext(it)) items[items.length] = encode(step.value, depth + 1, seen);
      }
      return ['s', id, apply(setSize, value, []), items];
    }
    if (inherits(value, typedArrayProto)) {
      const length = apply(typedLength, value, []);
      const items = [];
      for (let i = 0; !shell && i < Math.min(length, MAX_ITEMS); i++) items[i] = encode(value[i], depth + 1, seen);
      return ['t', id, apply(typedTag, value, []), length, items];
    }
    const props = [];
    if (!shell) {
      for (const key of ownKeys(value)) {
        const desc = getDesc(value, key);
        if (desc === undefined || !desc.enumerable) continue;
        const encodedKey = typeof key === 'symbol' ? ['y', apply(symbolDescription, key, []) ?? null] : key;
        props[props.length] = [encodedKey, 'value' in desc ? encode(desc.value, depth + 1, seen) : ['g', desc.get !== undefined, desc.set !== undefined]];
      }
    }
    return ['o', id, ctorName(value), props];
  }

  function encodeProperty(array, index, depth, seen) {
    const desc = getDesc(array, index);
    return 'value' in desc ? encode(desc.value, depth + 1, seen) : ['g', desc.get !== undefined, desc.set !== undefined];
  }

  const encodeArgs = (args) => {
    const seen = new MapCtor();
    const out = [];
    for (let i = 0; i < args.length; i++) out[i] = encode(args[i], 0, seen);
    return stringify(out);
  };

  const log = (...args) => { hostLog(encodeArgs(args)); };
  const sandboxConsole = freeze({ log, info: log, warn: log, error: log, debug: log });

  const waiting = new MapCtor();
  const callTool = (name, args) => {
    let json;
    try {
      json = stringify(args === undefined ? {} : args);
    } catch (error) {
      return reject(error);
    }
    if (typeof json !== 'string') return reject(new TypeError('tool arguments must be JSON-serializable'));
    const id = hostCall(name, json);
    return new PromiseCtor((resolve, rejectCall) => apply(mapSet, waiting, [id, [resolve, rejectCall]]));
  };
  const mapDelete = Map.prototype.delete;
  const settle = (id, ok, payload, text) => {
    const waiter = apply(mapGet, waiting, [id]);
    if (waiter === undefined) return;
    apply(mapDelete, waiting, [id]);
    if (!ok) {
      waiter[1](new ErrorCtor(payload));
      return;
    }
    if (text) {
      waiter[0](payload);
      return;
    }
    let value;
    try {
      value = parse(payload);
    } catch (error) {
      waiter[1](error);
      return;
    }
    waiter[0](value);
  };
  const tools = new Proxy(create(null), {
    get: (_target, name) => (typeof name === 'string' && name !== 'then' ? (args) => callTool(name, args) : undefined),
  });

  const finish = (value) => {
    let text;
    try {
      text = value === undefined ? undefined : typeof value === 'string' ? value : stringify(value);
    } catch (error) {
      return fail(error);
    }
    hostDone(typeof text === 'string' ? text : undefined);
  };
  const fail = (error) => {
    if (error instanceof ErrorCtor) hostFail('error', StringOf(error.message), StringOf(error.name));
    else hostFail('thrown', encodeArgs([error]), '');
  };

  const run = (code) => {
    let program;
    try {
      program = new AsyncFunction('tools', 'console', code);
    } catch (error) {
      fail(error);
      return;
    }
    apply(then, apply(program, undefined, [tools, sandboxConsole]), [finish, fail]);
  };
  return [run, settle];
})`;
