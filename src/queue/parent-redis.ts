/**
 * The parent's connections to Redis, opened on the first remote activation: a command client (bounded
 * retries: a dispatch that cannot reach Redis fails as QUEUE_UNAVAILABLE instead of waiting), a
 * blocking client for this runner's channel list, and the BullMQ queue activations are added to.
 * While no remote activation is live the sockets are unreferenced, so an idle runtime never holds
 * the process open.
 */
import type { Queue } from 'bullmq';
import { errorMessage } from '../errors.js';
import { Channel, type ChannelHandlers } from './channel.js';
import type { QueueRunnerConfig } from './config.js';
import {
  channelKey,
  checkDatabase,
  createClient,
  describeConnection,
  disconnect,
  type RedisClient,
  whenReady,
} from './redis.js';

/** Failed connection attempts before a dispatch gives up (with ioredis's 100, 200, 300 ms back-off). */
const DISPATCH_ATTEMPTS = 3;

export interface ParentRedis {
  readonly queue: Queue;
  readonly channel: Channel;
  readonly commands: RedisClient;
  /**
   * Rejects QUEUE_UNAVAILABLE when Redis stays unreachable for a few connection attempts, or refuses
   * the database the connection names (checked like `brood host` does, once it succeeds).
   */
  ready(): Promise<void>;
  setActive(active: boolean): void;
  close(): Promise<void>;
}

export async function openParentRedis(
  config: QueueRunnerConfig,
  self: string,
  handlers: ChannelHandlers,
  onError: (message: string) => void,
): Promise<ParentRedis> {
  const { Queue } = await import('bullmq');
  const where = describeConnection(config.connection);
  let lastError = '';
  const report = (error: unknown): void => {
    // One line per distinct cause: a Redis that is down fails every reconnection the same way.
    const message = errorMessage(error);
    if (message !== lastError) onError(`queue runner: Redis at ${where}: ${message}`);
    lastError = message;
  };
  const commands = await createClient(config.connection, { name: 'brood-parent', bounded: true, onError: report });
  const blocking = await createClient(config.connection, { name: 'brood-parent-channel', bounded: false });
  commands.on('ready', () => (lastError = ''));
  const queue = new Queue(config.queue, { connection: commands, prefix: config.prefix });
  queue.on('error', report);
  const ttlMs = Math.max(60_000, config.activationTimeoutMs * 6);
  const channel = new Channel(
    self,
    commands,
    blocking,
    (endpoint) => channelKey(config.prefix, config.queue, endpoint),
    ttlMs,
    handlers,
    config.secret,
  );
  let active = true;
  let connecting: Promise<void> | undefined;
  let databaseChecked = false;
  const apply = (client: RedisClient): void => {
    const stream = (client as unknown as { stream?: { ref?(): void; unref?(): void } }).stream;
    if (active) stream?.ref?.();
    else stream?.unref?.();
  };
  for (const client of [commands, blocking]) client.on('connect', () => apply(client));
  channel.start();
  return {
    queue,
    channel,
    commands,
    // One wait shared by every dispatch that arrives while connecting (200 of them, in a fan-out).
    ready: () => {
      if (commands.status === 'ready' && databaseChecked) return Promise.resolve();
      connecting ??= whenReady(commands, DISPATCH_ATTEMPTS, where)
        .then(() => checkDatabase(commands, where))
        .then(() => {
          databaseChecked = true;
        })
        .finally(() => (connecting = undefined));
      return connecting;
    },
    setActive: (value) => {
      active = value;
      apply(commands);
      apply(blocking);
    },
    close: async () => {
      await channel.close();
      await queue.close().catch(() => undefined);
      await disconnect(commands);
      await disconnect(blocking);
    },
  };
}
