/**
 * Redis clients for the queue runner and `brood host`. ioredis and bullmq are loaded here, lazily,
 * on first use: an embedder who never uses the queue runner never loads either.
 */
import type { Redis, RedisOptions } from 'ioredis';
import { BroodError, errorMessage } from '../errors.js';
import type { RedisConnectionOptions } from './config.js';

export type RedisClient = Redis;

/**
 * `bounded`: commands fail after a few reconnection attempts instead of waiting for Redis forever
 * (the parent turns that into QUEUE_UNAVAILABLE). Unbounded clients wait (BullMQ workers require it).
 */
export async function createClient(
  connection: string | RedisConnectionOptions,
  options: { name: string; bounded: boolean; onError?: (error: unknown) => void },
): Promise<RedisClient> {
  const { Redis } = await import('ioredis');
  const tuning: RedisOptions = {
    connectionName: options.name,
    maxRetriesPerRequest: options.bounded ? 3 : null,
    retryStrategy: (times) => Math.min(100 * times, 1000),
    // Commands in flight when a connection drops are resent after reconnecting (ioredis's default;
    // without it they would never settle). A resent LPUSH may deliver a batch twice: receivers drop
    // batches whose sequence number they have seen (channel.ts).
    autoResendUnfulfilledCommands: true,
  };
  const client =
    typeof connection === 'string'
      ? new Redis(connection, tuning)
      : new Redis({ ...(connection as RedisOptions), ...tuning });
  // Unheard, ioredis's 'error' events (every failed reconnection) would be uncaught exceptions.
  client.on('error', (error: unknown) => options.onError?.(error));
  return client;
}

/** Resolves once the client is connected; rejects QUEUE_UNAVAILABLE after `attempts` failed connections. */
export function whenReady(client: RedisClient, attempts: number, where: string): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    let failures = 0;
    const cleanup = (): void => {
      client.off('ready', onReady);
      client.off('error', onError);
    };
    const onReady = (): void => {
      cleanup();
      resolve();
    };
    const onError = (error: unknown): void => {
      failures += 1;
      if (failures < attempts) return;
      cleanup();
      reject(queueUnavailable(`cannot reach Redis at ${where}`, error));
    };
    client.on('ready', onReady);
    client.on('error', onError);
  });
}

/**
 * Fails when the client is not on the database its URL names. ioredis reports a SELECT refused while
 * connecting (an index the server does not have: "DB index is out of range") only as an 'error'
 * event, then serves on database 0; selecting again makes that a failure of the setup.
 */
export async function checkDatabase(client: RedisClient, where: string): Promise<void> {
  const db = client.options.db ?? 0;
  try {
    await client.select(db);
  } catch (error) {
    throw queueUnavailable(`Redis at ${where} refused database ${db}`, error);
  }
}

export function queueUnavailable(what: string, cause: unknown): BroodError {
  return new BroodError('QUEUE_UNAVAILABLE', `${what}: ${errorMessage(cause)}`, { cause });
}

/** Where a connection points, for messages (never the password). */
export function describeConnection(connection: string | RedisConnectionOptions): string {
  if (typeof connection !== 'string') {
    const { host = '127.0.0.1', port = 6379 } = connection as { host?: unknown; port?: unknown };
    return `${String(host)}:${String(port)}`;
  }
  try {
    const url = new URL(connection);
    return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return 'the configured Redis URL';
  }
}

export async function disconnect(client: RedisClient | undefined): Promise<void> {
  if (!client) return;
  if (client.status === 'ready') await client.quit().catch(() => undefined);
  client.disconnect(false);
}

/** Key names: one BullMQ queue, one channel list per endpoint (a parent runner or a host). */
export function modelsKey(prefix: string, queue: string, hash: string): string {
  return `${prefix}:${queue}:models:${hash}`;
}

export function channelKey(prefix: string, queue: string, endpoint: string): string {
  return `${prefix}:${queue}:channel:${endpoint}`;
}
