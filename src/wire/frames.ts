/**
 * The frames a link carries between the parent and a driver host (src/wire/link.ts batches them over
 * any carrier), declared once like every wire message (src/wire/protocol.ts declares the payloads).
 */
import { array, int, literal, object, optional, sharedBuffer, str, tagged, unknown } from '../declare.js';
import { activationOutcomeDecl, driverEventsDecl, driverPlanDecl } from './protocol.js';
import { type Wire, wire } from './wire-type.js';

// `a` is the activation id (the watch-board token).
const activation = int('positive');
/** Which host runs an activation (a `brood host` process), as its model/request events record it. */
const hostIdentityDecl = object({ name: str({ max: 256 }), pid: int('nonnegative') });
export type HostIdentity = Wire<typeof hostIdentityDecl>;

/**
 * Parent → driver host. A pool thread gets `init` once per link, before any `start`. A queue host gets
 * its plans as jobs instead (src/queue/job.ts), and, because shared memory cannot cross processes,
 * `cells` (the values of the plan's version cells and events flag, whenever they change), `stop` (a
 * force stop: a thread is recycled instead), `gone` (the parent no longer runs the activation: a stale
 * or duplicate host must drop it), `beat` (the link is alive: a thread's heartbeat is the watch board)
 * and `place` (an activation handed straight to a host that said it has `room`, instead of a job).
 */
const hostFrameDecl = tagged('k', [
  object({ k: literal('init'), board: sharedBuffer() }),
  /** `view` numbers the plan's view on this link, as for `place` below (src/wire/view-numbers.ts). */
  object({ k: literal('start'), a: activation, plan: driverPlanDecl, view: optional(int('positive')) }),
  object({ k: literal('rpc'), a: activation, m: unknown() }),
  object({ k: literal('cancel'), a: activation, turn: optional(int()) }),
  object({ k: literal('cells'), a: activation, v: array(int()) }),
  object({ k: literal('stop'), a: activation, reason: str() }),
  object({ k: literal('gone'), a: activation }),
  object({ k: literal('beat') }),
  /**
   * A queue activation placed on a host that said it has room: the job it would have been (src/queue/job.ts).
   * `view` numbers the plan's view on this link: the first place of a view carries it and its number,
   * later ones the number alone (the job's view null), so a fan-out's children do not ship it each.
   */
  object({ k: literal('place'), a: activation, job: unknown(), view: optional(int('positive')) }),
]);
export type HostFrame = Wire<typeof hostFrameDecl>;
export const hostFrame = wire(hostFrameDecl);

/**
 * Driver host → parent. `log` is one-way; `end` follows every other frame of its activation. A queue
 * host says `hello` when it takes an activation's job (the parent binds the activation to it then),
 * and `beat` like the parent; `room` invites `place` frames, `full` turns one away.
 */
const parentFrameDecl = tagged('k', [
  object({ k: literal('rpc'), a: activation, m: unknown() }),
  object({ k: literal('log'), a: activation, events: driverEventsDecl }),
  object({ k: literal('end'), a: activation, outcome: activationOutcomeDecl }),
  object({ k: literal('hello'), a: activation, host: hostIdentityDecl }),
  object({ k: literal('beat') }),
  /** A queue host can take `n` more activations from this parent as `place` frames (advisory). */
  object({ k: literal('room'), n: int('nonnegative') }),
  /** A queue host had no room for a placed activation: it never started there (the parent queues it as a job). */
  object({ k: literal('full'), a: activation }),
]);
export type ParentFrame = Wire<typeof parentFrameDecl>;
export const parentFrame = wire(parentFrameDecl);

/**
 * The handshake a pool thread sends on its parentPort once its driver module loaded: the other end
 * of the link it created. (Piscina forwards worker messages to the pool's 'message' event.)
 */
export const LINK_HELLO = 'brood:link';

/**
 * The frames' one-letter keys stay on the wire (a batch carries thousands of them): a link names them
 * on arrival (`readHostFrame`, `readParentFrame`) and shortens them on sending (`shortFrame`), so the
 * ends of a link read and write `kind`, `activation`, `message`, `values` and `count`.
 */
const NAMES = { k: 'kind', a: 'activation', m: 'message', v: 'values', n: 'count' } as const;
const SHORT: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(NAMES).map(([short, name]) => [name, short]),
);
type Short = keyof typeof NAMES;
/** A frame with its keys named (distributes over a union of frames). */
type Named<F> = F extends unknown ? { [K in keyof F as K extends Short ? (typeof NAMES)[K] : K]: F[K] } : never;

/** A frame a driver host receives, its keys named. */
export type ToHost = Named<HostFrame>;
/** A frame the parent receives, its keys named. */
export type ToParent = Named<ParentFrame>;

function renamed(frame: object, names: Readonly<Record<string, string>>): object {
  const out: Record<string, unknown> = {};
  for (const key in frame) out[names[key] ?? key] = (frame as Record<string, unknown>)[key];
  return out;
}

/**
 * The frames of every call and every event batch (`rpc`, `log`) are renamed by hand: one object
 * literal instead of a loop over keys, so the wire's per-message cost does not grow.
 */
function named(raw: object): object {
  const frame = raw as { k?: unknown; a?: unknown; m?: unknown; events?: unknown };
  if (frame.k === 'rpc') return { kind: 'rpc', activation: frame.a, message: frame.m };
  if (frame.k === 'log') return { kind: 'log', activation: frame.a, events: frame.events };
  return renamed(raw, NAMES);
}

/** A frame as it arrives at a driver host, checked and named; undefined when malformed. */
export function readHostFrame(raw: unknown): ToHost | undefined {
  return hostFrame.check(raw) ? (named(raw as object) as ToHost) : undefined;
}

/** A frame as it arrives at the parent, checked and named; undefined when malformed. */
export function readParentFrame(raw: unknown): ToParent | undefined {
  return parentFrame.check(raw) ? (named(raw as object) as ToParent) : undefined;
}

/** A named frame as it crosses: its keys shortened (keys already short pass as they are). */
export function shortFrame(frame: object): object {
  const message = frame as { kind?: unknown; activation?: unknown; message?: unknown; events?: unknown };
  if (message.kind === 'rpc') return { k: 'rpc', a: message.activation, m: message.message };
  if (message.kind === 'log') return { k: 'log', a: message.activation, events: message.events };
  return renamed(frame, SHORT);
}

/** A frame from a trusted end (a pool thread: the parent checks kind and activation only), named unchecked. */
export function namedFrame(raw: object): object {
  return named(raw);
}
