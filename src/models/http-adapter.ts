/**
 * The request loop both HTTP adapters share: one POST per request (streaming or not), retried only
 * before a completion; the answer read by its content type (SSE or JSON). A protocol supplies only
 * what differs: its path, its own headers, its body and its two parsers.
 */

import type { Cancellation } from '../util/lazy-abort.js';
import { broodVersion } from '../version.js';
import { throwIfAborted } from './abort.js';
import { withKeyHint } from './api-key.js';
import { cancellationOf } from './cancellation.js';
import { failure } from './failure.js';
import { apiKeyOf, type BodyKind, bodyKind, postWithRetries, readJson } from './http.js';
import type { HttpResponse } from './http-transport.js';
import { effectiveOptions, type RequestOptions, type ResolvedRetry } from './request-options.js';
import type { ModelAdapter, ModelInfo, ModelProviderConfig, ModelRequest, ModelResponse } from './types.js';

/** What both adapters read back out of `config.options`. */
export interface HttpAdapterOptions<R extends RequestOptions = RequestOptions> {
  baseURL: string;
  apiKey?: string;
  apiKeyEnv?: string;
  retry: ResolvedRetry;
  /** Provider-wide request options. */
  request: R;
  /** Overrides by model id. */
  perModel: Record<string, R>;
}

export interface BodyInput<O, R> {
  options: O;
  effective: R;
  stream: boolean;
  info: ModelInfo | undefined;
  request: ModelRequest;
}

export interface HttpProtocol<R extends RequestOptions, O extends HttpAdapterOptions<R>> {
  /** Appended to the base URL (trailing slashes trimmed). */
  path: string;
  /** The protocol's own headers: authentication with the key (when there is one) and any version header. */
  headers(options: O, key: string | undefined): Record<string, string>;
  /** The JSON body, or a diagnostic when the request cannot be expressed in this protocol. */
  body(input: BodyInput<O, R>): { body: Record<string, unknown> } | { diagnostic: string };
  readStream(body: AsyncIterable<Uint8Array>, request: ModelRequest): Promise<ModelResponse>;
  readJson(json: unknown, onTextDelta: ModelRequest['onTextDelta']): ModelResponse;
}

/** Adapters that await ModelRequest.atSlot right before each send (the HTTP adapters). */
const slotSenders = new WeakSet<ModelAdapter>();

/** Whether `adapter` sends a paced request at its slot itself (ModelRequest.atSlot). */
export function sendsAtSlot(adapter: ModelAdapter): boolean {
  return slotSenders.has(adapter);
}

export function httpAdapter<R extends RequestOptions, O extends HttpAdapterOptions<R>>(
  config: ModelProviderConfig,
  options: O,
  protocol: HttpProtocol<R, O>,
): ModelAdapter {
  const url = `${options.baseURL.replace(/\/+$/, '')}${protocol.path}`;
  const models = new Map(config.models.map((m) => [m.id, m]));
  const adapter: ModelAdapter = {
    request: async (request) => {
      const cancel = cancellationOf(request);
      throwIfAborted(cancel);
      const effective = effectiveOptions(options.request, options.perModel[request.route.model]);
      const stream = effective.stream ?? true;
      const body = protocol.body({ options, effective, stream, info: models.get(request.route.model), request });
      if ('diagnostic' in body) return failure(body.diagnostic);
      const outcome = await postWithRetries({
        url,
        headers: headersFor(
          { ...protocol.headers(options, apiKeyOf(options)), ...request.traceHeaders },
          effective,
          stream,
        ),
        body: JSON.stringify(body.body),
        retry: options.retry,
        signal: cancel,
        ...(request.retryGate === undefined ? {} : { retryGate: request.retryGate }),
        ...(request.atSlot === undefined ? {} : { atSlot: request.atSlot }),
        ...(request.onWrite === undefined ? {} : { onWrite: request.onWrite }),
      });
      if (!outcome.ok) return failure(withKeyHint(outcome.diagnostic, outcome.status, options));
      return readAnswer(protocol, outcome.response, stream ? 'sse' : 'json', request, cancel);
    },
  };
  slotSenders.add(adapter);
  return adapter;
}

async function readAnswer<R extends RequestOptions, O extends HttpAdapterOptions<R>>(
  protocol: HttpProtocol<R, O>,
  response: HttpResponse,
  requested: BodyKind,
  request: ModelRequest,
  cancel: Cancellation,
): Promise<ModelResponse> {
  const kind = await bodyKind(response, requested, cancel);
  if (typeof kind === 'object') return failure(kind.diagnostic);
  if (kind === 'sse') return protocol.readStream(response.body, request);
  const read = await readJson(response, cancel);
  throwIfAborted(cancel);
  return read.ok ? protocol.readJson(read.json, request.onTextDelta) : failure(read.diagnostic);
}

/** Configured headers come last (lower-cased so they replace ours rather than being appended to them). */
function headersFor(own: Record<string, string>, effective: RequestOptions, stream: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
    ...own,
    'user-agent': `brood/${broodVersion()}`,
  };
  for (const [name, value] of Object.entries(effective.headers ?? {})) headers[name.toLowerCase()] = value;
  return headers;
}
