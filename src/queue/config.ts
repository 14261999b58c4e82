/**
 * `queueRunner(options)`: where remote drivers run (BullMQ on Redis, served by `brood host`
 * processes). It only validates, checks that bullmq and ioredis are installed, and describes; each
 * runtime that uses it opens its own connections, lazily, on its first remote activation (createBrood
 * stays synchronous, nothing is loaded unused).
 */
import { z } from 'zod';
import { DEFAULTS } from '../defaults.js';
import { BroodError } from '../errors.js';
import { requireOptionalPeers } from '../util/optional-peers.js';
import { parseConfig } from '../util/untrusted.js';

/** ioredis connection options (host, port, password, db, tls, ...): passed through as given. */
export type RedisConnectionOptions = Record<string, unknown>;

export interface QueueRunnerOptions {
  /** A Redis URL (`redis://host:6379/0`) or ioredis options. */
  connection: string | RedisConnectionOptions;
  /** The BullMQ queue hosts take activations from (default 'brood'; `brood host --queue`). */
  queue?: string;
  /** The Redis key prefix of the queue and the channels (default 'brood'). */
  prefix?: string;
  /** How long a host may stay silent before its activations are re-planned elsewhere (default 10 s). */
  activationTimeoutMs?: number;
  /**
   * A shared secret (at least 16 characters; `brood host --secret-env NAME` on the hosts): every
   * channel batch, queued job and model config record is then sealed with an HMAC, and one without a
   * valid seal is dropped. Unset: Redis is trusted with data (docs/scale-out.md, "Trust").
   */
  secret?: string;
}

const QUEUE_RUNNER = Symbol.for('brood.queueRunner');

export interface QueueRunnerConfig {
  readonly [QUEUE_RUNNER]: true;
  readonly kind: 'queue';
  readonly connection: string | RedisConnectionOptions;
  readonly queue: string;
  readonly prefix: string;
  readonly activationTimeoutMs: number;
  readonly secret: string | undefined;
}

/** A shorter secret is a guessable one. */
export const QUEUE_SECRET_MIN_LENGTH = 16;

const name = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, _ . - (at most 64): it is part of Redis key names');

const optionsSchema = z.strictObject({
  connection: z.union([
    z.string().regex(/^rediss?:\/\//, 'a redis:// or rediss:// URL'),
    z.record(z.string(), z.unknown()),
  ]),
  queue: name.optional(),
  prefix: name.optional(),
  activationTimeoutMs: z.number().int().min(500).max(3_600_000).optional(),
  secret: z.string().min(QUEUE_SECRET_MIN_LENGTH).optional(),
});

export function queueRunner(options: QueueRunnerOptions): QueueRunnerConfig {
  const { connection, queue, prefix, activationTimeoutMs, secret } = parseConfig(
    optionsSchema,
    options,
    'queueRunner options',
  );
  // bullmq and ioredis are imported on the first remote activation; a missing one is reported here.
  requireOptionalPeers('queueRunner', 'queue');
  const config = {
    [QUEUE_RUNNER]: true as const,
    kind: 'queue' as const,
    connection,
    queue: queue ?? DEFAULTS.queue.name,
    prefix: prefix ?? DEFAULTS.queue.prefix,
    activationTimeoutMs: activationTimeoutMs ?? DEFAULTS.queue.activationTimeoutMs,
    secret,
  };
  // Not enumerable: a config that is logged or inspected does not show the secret.
  Object.defineProperty(config, 'secret', { enumerable: false });
  return Object.freeze(config);
}

export function isQueueRunnerConfig(value: unknown): value is QueueRunnerConfig {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[QUEUE_RUNNER] === true;
}

/** Where a driver runs: the local pool, the main thread, or a queue of remote hosts. */
export type RunnerChoice = 'worker' | 'inline' | QueueRunnerConfig;

/**
 * Secrets live where the hosts run: a remote driver resolves `apiKeyEnv` on its host, so a config that
 * carries the key itself would ship it through Redis. Returns the ids of the configs that do.
 */
export function inlineKeyProviders(models: readonly { id: string; options?: Record<string, unknown> }[]): string[] {
  return models.filter((config) => config.options?.apiKey !== undefined).map((config) => config.id);
}

export function inlineKeyError(ids: readonly string[]): BroodError {
  return new BroodError(
    'INVALID_CONFIG',
    `model provider ${ids.map((id) => `'${id}'`).join(', ')} carries an inline apiKey, which a remote driver (queueRunner) would receive through Redis: use apiKeyEnv (the key is then read on the host)`,
    { details: { keys: ids.map((id) => `models.${id}.apiKey`) } },
  );
}
