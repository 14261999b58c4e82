/**
 * comlink's calling side for the gateway, without its proxies. A driver host calls the parent's
 * gateway by comlink's protocol (an APPLY message with a one-name path and RAW arguments, answered by
 * `Comlink.expose` with a RAW value or a thrown error), and the parent serves it with comlink. But
 * `Comlink.wrap` makes two Proxies per activation (the root and the method's), five trap closures
 * each, registers both with a FinalizationRegistry, and names each call with a random id built from
 * four strings: ~1.4 KB per running driver that a wide fan-out's thread holds thousands of. The
 * messages are the same ones `wrap` sends, so `isGatewayCall` and the parent's `expose` see no
 * difference.
 */
import type * as Comlink from 'comlink';
import { BroodError } from '../errors.js';

interface Waiter {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export class ComlinkCaller {
  /**
   * The call awaiting its answer, when there is one: a driver host has one call out at a time but for
   * Code Mode's, so it is kept in fields. A one-entry table made the map's backing store anew on
   * nearly every call (V8 shrinks it when its last entry goes, grows it again on the next), and those
   * tables outlived the model's second of latency in a wide fan-out's pool thread.
   */
  private loneId: string | undefined;
  private lone: Waiter | undefined;
  /** Calls made while another was out, by id (made when the first such call is). */
  private more: Map<string, Waiter> | undefined;
  private listening = false;

  constructor(private readonly endpoint: Comlink.Endpoint) {}

  /** Calls `method` with `args` on the object exposed at the other end; settles with its answer. */
  call(method: string, args: unknown[]): Promise<unknown> {
    if (!this.listening) this.listen();
    const id = nextCallId();
    const argumentList = args.map((value) => ({ type: 'RAW', value }));
    return new Promise((resolve, reject) => {
      if (this.loneId === undefined) {
        this.loneId = id;
        this.lone = { resolve, reject };
      } else {
        this.more ??= new Map();
        this.more.set(id, { resolve, reject });
      }
      this.endpoint.postMessage({ id, type: 'APPLY', path: [method], argumentList });
    });
  }

  private listen(): void {
    this.listening = true;
    this.endpoint.addEventListener('message', (event: Event) => this.answered((event as MessageEvent).data));
    this.endpoint.start?.();
  }

  /** The waiter of call `id`, no longer waiting; undefined when no call of this caller has that id. */
  private take(id: string): Waiter | undefined {
    if (id === this.loneId) {
      const waiter = this.lone;
      this.loneId = undefined;
      this.lone = undefined;
      return waiter;
    }
    const waiter = this.more?.get(id);
    if (waiter !== undefined) this.more?.delete(id);
    return waiter;
  }

  private answered(data: unknown): void {
    const answer = data as { id?: unknown; type?: unknown; value?: unknown } | null;
    if (typeof answer !== 'object' || answer === null || typeof answer.id !== 'string') return;
    const waiter = this.take(answer.id);
    if (waiter === undefined) return;
    if (!isGatewayAnswer(answer))
      waiter.reject(new BroodError('INTERNAL', `the gateway answered a call with a ${String(answer.type)} value`));
    else if (answer.type === 'RAW') waiter.resolve(answer.value);
    else waiter.reject(thrownBy(answer.value));
  }
}

/** Whether an `rpc` frame's message is comlink's answer to a call (a plain value or a thrown error). */
export function isGatewayAnswer(message: unknown): boolean {
  const answer = message as { type?: unknown; id?: unknown; name?: unknown } | null;
  if (typeof answer !== 'object' || answer === null || typeof answer.id !== 'string') return false;
  return answer.type === 'RAW' || (answer.type === 'HANDLER' && answer.name === 'throw');
}

/**
 * Call ids unique beyond one endpoint: a queue host's own calls and the calls it relays for its
 * threads' drivers share the endpoint to the parent, and answers are matched by id alone. So each
 * thread (each module instance) numbers its calls after a random prefix of its own, as comlink's
 * random ids were.
 */
const ID_PREFIX = `${crypto.randomUUID().slice(0, 8)}-`;
let lastCallId = 0;
function nextCallId(): string {
  lastCallId += 1;
  return `${ID_PREFIX}${lastCallId}`;
}

/** What `Comlink.expose` sent for a throw, as `wrap` would rethrow it. */
function thrownBy(serialized: unknown): unknown {
  const thrown = serialized as { isError?: unknown; value?: unknown } | null;
  if (thrown?.isError !== true) return thrown?.value;
  const fields = thrown.value as { message?: unknown } | null;
  return Object.assign(new Error(String(fields?.message ?? 'the gateway threw')), fields);
}
