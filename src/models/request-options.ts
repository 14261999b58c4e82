/**
 * Options both HTTP adapters share: request options (provider-wide, overridable per model), retry
 * policy and the model-entry shape. Factories validate them once; adapters re-validate what crossed
 * into the worker, because configs can be hand-built.
 */
import { z } from 'zod';
import { DEFAULTS } from '../defaults.js';
import { lazy } from '../util/lazy.js';
import { withDefaults } from '../util/plain.js';
import type { ModelInfo } from './types.js';

export type ToolChoice = 'auto' | 'required' | 'none' | { name: string };

/** Passed through to the wire exactly (the adapter only renames keys to the protocol's spelling). */
export interface RequestOptions {
  temperature?: number;
  topP?: number;
  seed?: number;
  /** One stop sequence or several. */
  stop?: string | string[];
  /** Sent only when the request offers tools (servers reject it otherwise). */
  toolChoice?: ToolChoice;
  /** Sent only when the request offers tools. */
  parallelToolCalls?: boolean;
  /** The protocol's own response-format object, sent as given. */
  responseFormat?: Record<string, unknown>;
  /** Extra HTTP headers (an org id, a gateway key); a model's headers are merged over the provider's. */
  headers?: Record<string, string>;
  /** Merged into the JSON body last (vendor fields); a model's keys are merged over the provider's. */
  extraBody?: Record<string, unknown>;
  /** Default true. false: one plain JSON completion per request. */
  stream?: boolean;
}

export interface RetryOptions {
  /** Retries after the first attempt (default 2). */
  retries?: number;
  /** First backoff delay; doubled per retry (default 500 ms). */
  baseDelayMs?: number;
  /** Cap of the exponential backoff (default 8000 ms). */
  maxDelayMs?: number;
  /**
   * Longest `retry-after` honoured, governed provider or not; a longer one fails the request at once
   * instead of being waited for (default 60000 ms, at most 2^31 - 1).
   */
  maxRetryAfterMs?: number;
}

export type ResolvedRetry = Required<RetryOptions>;

const MAX_TIMER_MS = 2 ** 31 - 1;

/** A catalog entry: a plain id, or an object with effort data, an output cap and request-option overrides. */
export type ModelEntry =
  | string
  | ({ id: string; efforts?: string[]; defaultEffort?: string; maxTokens?: number } & RequestOptions);

/**
 * The shared option schemas, built on first use (src/util/lazy.ts): the HTTP adapter's module, and so this
 * one, is part of every pool thread's boot, where no option is parsed.
 */
export const optionSchemas = lazy(() => {
  const ms = z.number().finite().nonnegative();
  // A wait this option allows is handed to a timer (or a provider's pause): never past what a timer takes.
  const waitMs = ms.max(MAX_TIMER_MS, `at most ${MAX_TIMER_MS} ms (the largest delay a Node.js timer supports)`);
  const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be a valid HTTP header name');
  const toolChoice = z.union([z.enum(['auto', 'required', 'none']), z.strictObject({ name: z.string().min(1) })]);
  /** zod shape of RequestOptions; spread into strict provider and model schemas. */
  const requestOptionShape = {
    temperature: z.number().finite().optional(),
    topP: z.number().finite().optional(),
    seed: z.number().int().optional(),
    stop: z.union([z.string(), z.array(z.string())]).optional(),
    toolChoice: toolChoice.optional(),
    parallelToolCalls: z.boolean().optional(),
    responseFormat: z.record(z.string(), z.unknown()).optional(),
    headers: z.record(headerName, z.string()).optional(),
    extraBody: z.record(z.string(), z.unknown()).optional(),
    stream: z.boolean().optional(),
  };
  return {
    retry: z.strictObject({
      retries: z.number().int().nonnegative().max(10).optional(),
      baseDelayMs: ms.optional(),
      maxDelayMs: waitMs.optional(),
      maxRetryAfterMs: waitMs.optional(),
    }),
    resolvedRetry: z.object({
      retries: z.number().int().nonnegative(),
      baseDelayMs: ms,
      maxDelayMs: waitMs,
      maxRetryAfterMs: waitMs,
    }),
    httpURL: z
      .string()
      .refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), { message: 'must be an http(s) URL' }),
    requestOptionShape,
    requestOptions: z.strictObject(requestOptionShape),
  };
});

/** A model entry schema whose request options are limited to `allowed` (a protocol may lack some). */
export function modelEntrySchema<S extends z.core.$ZodLooseShape>(requestShape: S) {
  return z.union([
    z.string().min(1),
    z
      .strictObject({
        id: z.string().min(1),
        efforts: z.array(z.string()).optional(),
        defaultEffort: z.string().optional(),
        maxTokens: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
        ...requestShape,
      })
      .refine(
        (entry) => {
          const m = entry as { efforts?: string[]; defaultEffort?: string };
          return m.defaultEffort === undefined || (m.efforts ?? []).includes(m.defaultEffort);
        },
        {
          message: 'defaultEffort must be one of efforts',
          path: ['defaultEffort'],
        },
      ),
  ]);
}

const requestOptionKeys = lazy(() => Object.keys(optionSchemas().requestOptionShape) as (keyof RequestOptions)[]);

/** Picks the request-option keys out of a parsed options object or model entry, dropping absent ones. */
export function pickRequestOptions(source: Record<string, unknown>): RequestOptions {
  const out: Record<string, unknown> = {};
  for (const key of requestOptionKeys()) if (source[key] !== undefined) out[key] = source[key];
  return out as RequestOptions;
}

export function toModelInfo(entry: ModelEntry): ModelInfo {
  if (typeof entry === 'string') return { id: entry, efforts: [] };
  const info: ModelInfo = { id: entry.id, efforts: [...(entry.efforts ?? [])] };
  if (entry.defaultEffort !== undefined) info.defaultEffort = entry.defaultEffort;
  if (entry.maxTokens !== undefined) info.maxTokens = entry.maxTokens;
  return info;
}

/** Per-model request-option overrides keyed by model id (only models that set any). */
export function perModelOptions(entries: ModelEntry[]): Record<string, RequestOptions> {
  const out: Record<string, RequestOptions> = {};
  for (const entry of entries) {
    if (typeof entry === 'string') continue;
    const options = pickRequestOptions(entry as unknown as Record<string, unknown>);
    if (Object.keys(options).length > 0) out[entry.id] = options;
  }
  return out;
}

export function resolveRetry(retry: RetryOptions | undefined): ResolvedRetry {
  return withDefaults(DEFAULTS.retry, retry);
}

/** A model's options over the provider's; headers and extraBody merge key by key, the rest replace. */
export function effectiveOptions<R extends RequestOptions>(provider: R, model: R | undefined): R {
  if (model === undefined) return provider;
  const merged: R = { ...provider, ...model };
  if (provider.headers !== undefined || model.headers !== undefined)
    merged.headers = { ...provider.headers, ...model.headers };
  if (provider.extraBody !== undefined || model.extraBody !== undefined)
    merged.extraBody = { ...provider.extraBody, ...model.extraBody };
  return merged;
}
