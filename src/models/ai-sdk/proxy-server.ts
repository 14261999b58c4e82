/**
 * The parent's side of the proxied shape: the model objects stay here and drivers' calls arrive through
 * their activation's gateway (DriverGateway.modelProxy): `open` starts a call (`doStream`), `pull`
 * takes the parts that arrived since (waiting for one when none did), `cancel` ends it. A request
 * costs one crossing to open plus one per batch of parts. Only the parts a driver reads cross, as
 * plain data: an error becomes a CallFailure (an Error copied between threads keeps only its message).
 * Every call is checked here: a driver's thread is not trusted to send well-formed ones.
 */
import { BroodError } from '../../errors.js';
import type { ModelProviderConfig } from '../types.js';
import { callFailureOf } from './call-failure.js';
import { withUrlObjects } from './call-options.js';
import type { LanguageModelLike } from './language-model.js';
import { aiSdkOptionsOf, proxiedModelsOf } from './options.js';
import type { StreamPart } from './request.js';

export type ProxyCall =
  | { op: 'open'; provider: string; model: string; options: Record<string, unknown> }
  | { op: 'pull'; id: string }
  | { op: 'cancel'; id: string };

/**
 * `open`'s answer: the stream's id (and what the model could not take, `dropped`), or the call's
 * failure before any part.
 */
export type OpenReply = { id: string; dropped?: string } | { failure: ReturnType<typeof callFailureOf> };
export interface PullReply {
  parts: StreamPart[];
  done: boolean;
}

const FORWARDED = new Set(['text-delta', 'reasoning-delta', 'tool-call', 'finish', 'error']);

interface OpenStream {
  owner: string;
  controller: AbortController;
  parts: StreamPart[];
  done: boolean;
  wake?: () => void;
}

export class ModelProxy {
  private readonly streams = new Map<string, OpenStream>();
  /** The stream each agent has open: a driver makes one request at a time, so a new one ends the last. */
  private readonly byOwner = new Map<string, string>();
  private nextId = 0;

  private constructor(private readonly models: ReadonlyMap<string, Record<string, LanguageModelLike>>) {}

  /**
   * A proxy for the configs' proxied-shape providers; undefined when there are none. In the parent
   * only: a queue host gets these configs without their objects, and its drivers' calls are relayed here.
   */
  static for(configs: readonly ModelProviderConfig[]): ModelProxy | undefined {
    const models = new Map<string, Record<string, LanguageModelLike>>();
    for (const config of configs) {
      if (config.kind !== 'ai-sdk' || aiSdkOptionsOf(config).shape !== 'proxy') continue;
      const objects = proxiedModelsOf(config);
      if (objects === undefined)
        throw new BroodError(
          'INVALID_CONFIG',
          `model provider '${config.id}' of kind 'ai-sdk' has no model objects (build it with aiSdkModels)`,
          { details: { provider: config.id } },
        );
      models.set(config.id, objects);
    }
    return models.size === 0 ? undefined : new ModelProxy(models);
  }

  /** Serves one call of agent `owner`; a malformed call is INVALID_CONFIG, a foreign stream's id unknown. */
  async handle(owner: string, raw: unknown): Promise<OpenReply | PullReply> {
    const call = proxyCallOf(raw);
    if (call.op === 'open') return this.open(owner, call);
    const stream = this.streams.get(call.id);
    if (stream === undefined || stream.owner !== owner) return { parts: [], done: true };
    if (call.op === 'cancel') {
      this.end(call.id, stream);
      return { parts: [], done: true };
    }
    return this.pull(call.id, stream);
  }

  /** Ends the call agent `owner` has open, if any (the agent was disposed). */
  endOwner(owner: string): void {
    const id = this.byOwner.get(owner);
    const stream = id === undefined ? undefined : this.streams.get(id);
    if (id !== undefined && stream !== undefined) this.end(id, stream);
  }

  /** Ends every open call (the runtime closes). */
  close(): void {
    for (const [id, stream] of this.streams) this.end(id, stream);
  }

  private async open(owner: string, call: Extract<ProxyCall, { op: 'open' }>): Promise<OpenReply> {
    const model = this.models.get(call.provider)?.[call.model];
    if (model === undefined)
      throw new BroodError('UNKNOWN_MODEL', `no proxied AI SDK model '${call.provider}/${call.model}'`);
    const previous = this.byOwner.get(owner);
    const stale = previous === undefined ? undefined : this.streams.get(previous);
    if (previous !== undefined && stale !== undefined) this.end(previous, stale);
    const controller = new AbortController();
    const { options, dropped } = forVersion(call.options, model.specificationVersion);
    let stream: ReadableStream<unknown>;
    try {
      ({ stream } = await model.doStream({ ...withUrlObjects(options), abortSignal: controller.signal }));
    } catch (error) {
      return { failure: callFailureOf(error) };
    }
    const id = String(++this.nextId);
    const open: OpenStream = { owner, controller, parts: [], done: false };
    this.streams.set(id, open);
    this.byOwner.set(owner, id);
    void pump(stream, open, controller.signal);
    return dropped === undefined ? { id } : { id, dropped };
  }

  private async pull(id: string, stream: OpenStream): Promise<PullReply> {
    if (stream.parts.length === 0 && !stream.done) await new Promise<void>((resolve) => (stream.wake = resolve));
    const parts = stream.parts.splice(0);
    if (stream.done) this.forget(id, stream);
    return { parts, done: stream.done };
  }

  private end(id: string, stream: OpenStream): void {
    stream.controller.abort();
    stream.done = true;
    stream.wake?.();
    this.forget(id, stream);
  }

  private forget(id: string, stream: OpenStream): void {
    this.streams.delete(id);
    if (this.byOwner.get(stream.owner) === id) this.byOwner.delete(stream.owner);
  }
}

/** Reads the model's stream into the open call's buffer, waking a waiting pull on each part. */
async function pump(stream: ReadableStream<unknown>, open: OpenStream, signal: AbortSignal): Promise<void> {
  const reader = stream.getReader();
  signal.addEventListener('abort', () => void reader.cancel().catch(() => {}), { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || open.done) break;
      const part = value as StreamPart;
      if (!FORWARDED.has(String(part?.type))) continue;
      open.parts.push(part.type === 'error' ? { type: 'error', error: callFailureOf(part.error) } : part);
      wake(open);
    }
  } catch (error) {
    if (!signal.aborted) open.parts.push({ type: 'error', error: callFailureOf(error) });
  }
  open.done = true;
  wake(open);
}

function wake(open: OpenStream): void {
  const wakeUp = open.wake;
  open.wake = undefined;
  wakeUp?.();
}

/** Only v4 has a `reasoning` option: an older model is called without it (the driver notes it). */
function forVersion(
  options: Record<string, unknown>,
  version: string,
): { options: Record<string, unknown>; dropped?: string } {
  if (version === 'v4' || options.reasoning === undefined) return { options };
  const { reasoning, ...rest } = options;
  return {
    options: rest,
    dropped: `reasoning effort '${String(reasoning)}' ignored: LanguageModel ${version} has no reasoning option`,
  };
}

function proxyCallOf(raw: unknown): ProxyCall {
  const call = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const text = (key: string): string => {
    const value = call[key];
    if (typeof value !== 'string' || value === '') throw malformed(`'${key}' must be a non-empty string`);
    return value;
  };
  if (call.op === 'pull' || call.op === 'cancel') return { op: call.op, id: text('id') };
  if (call.op !== 'open') throw malformed("'op' must be 'open', 'pull' or 'cancel'");
  const options = call.options as Record<string, unknown> | undefined;
  if (typeof options !== 'object' || options === null || !Array.isArray(options.prompt))
    throw malformed("'options' must be call options with a prompt");
  return { op: 'open', provider: text('provider'), model: text('model'), options };
}

function malformed(reason: string): BroodError {
  return new BroodError('INVALID_CONFIG', `malformed AI SDK proxy call: ${reason}`);
}
