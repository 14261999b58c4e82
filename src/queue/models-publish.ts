/**
 * The parent's model configs in Redis. Jobs name the configs by hash instead of carrying them (a
 * scripted config can be tens of KB; a fan-out would ship it once per child). They are renewed at most
 * every few seconds, and after any recovery (a restarted Redis may have lost them; a host that misses
 * them hands the activation back).
 */
import type { ModelProviderConfig } from '../models/types.js';
import type { QueueRunnerConfig } from './config.js';
import type { ParentRedis } from './parent-redis.js';
import { type ModelsRecord, modelsRecord } from './record-seal.js';
import { modelsKey } from './redis.js';

/** How long the model configs stay in Redis without a dispatch renewing them. */
const MODELS_TTL_MS = 3_600_000;
/** How long after storing them a dispatch trusts they are still there. */
const RENEW_AFTER_MS = 5_000;

export class ModelsPublisher {
  /** The configs a host may receive (none with an inline apiKey), stored once per content hash. */
  private readonly record: ModelsRecord;
  private storedAt = 0;
  private storing: Promise<void> | undefined;

  constructor(
    models: readonly ModelProviderConfig[],
    private readonly config: QueueRunnerConfig,
  ) {
    const json = JSON.stringify(models.filter((model) => model.options.apiKey === undefined));
    this.record = modelsRecord(json, config.secret);
  }

  /** The content hash a job names the configs by. */
  get hash(): string {
    return this.record.hash;
  }

  /** Stores the configs unless they were stored within the last few seconds. */
  publish(redis: ParentRedis): Promise<void> {
    if (Date.now() - this.storedAt < RENEW_AFTER_MS) return Promise.resolve();
    this.storing ??= redis.commands
      .set(modelsKey(this.config.prefix, this.config.queue, this.record.hash), this.record.body, 'PX', MODELS_TTL_MS)
      .then(() => {
        this.storedAt = Date.now();
      })
      .finally(() => {
        this.storing = undefined;
      });
    return this.storing;
  }

  /** Redis or a host may have lost the configs: the next dispatch stores them again. */
  invalidate(): void {
    this.storedAt = 0;
  }
}
