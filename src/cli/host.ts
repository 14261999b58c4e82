/**
 * `brood host --redis <url>`: a driver host for queueRunner parents (src/queue/host.ts). It prints one
 * ready line on stderr once connected and taking work, and runs until SIGINT/SIGTERM, when it stops
 * taking work and hands what it holds back to the parents. Any failure to set up on Redis at start
 * (unreachable, a database it refuses): exit 1 with QUEUE_UNAVAILABLE and no ready line.
 */
import { availableParallelism } from 'node:os';
import { DEFAULTS } from '../defaults.js';
import { errorMessage } from '../errors.js';
import { QUEUE_SECRET_MIN_LENGTH } from '../queue/config.js';
import type { HostCodeProvider } from '../queue/host-models.js';
import { requireOptionalPeers } from '../util/optional-peers.js';
import { commandHelp, parseFlags, stringFlag, UsageError } from './cli-errors.js';

export const HOST_USAGE =
  'brood host --redis <url> [--queue <name>] [--threads <n>] [--concurrency <k>] [--secret-env <NAME>] [--config <file>] [--telemetry]';

export const HOST_HELP = commandHelp(HOST_USAGE, [
  'Runs the drivers of queueRunner parents in this process (its own worker pool); every tool call goes',
  'back to the parent. --queue defaults to brood, --threads to the CPU count, --concurrency (activations',
  'held at once) to 64. Prints "brood host ready <queue> threads=<n> concurrency=<k>" on stderr when it',
  'takes work; SIGINT/SIGTERM hand held activations back to their parents and exit. --secret-env names',
  "the environment variable holding the parents' queueRunner secret: batches, jobs and model configs are",
  'then sealed and checked. --config names a JSON file listing the adapter modules this host may load',
  '({ "models": [{ "kind": "module", "id": "<provider id>", "moduleUrl": "<URL or path>" }] }): a host',
  'never loads code named in Redis, and a parent provider of kind module runs only on hosts that list it.',
  "--telemetry: a span per activation in this process's global OpenTelemetry tracer provider (register it",
  "with node --import), continuing the parent turn's trace.",
]);

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export async function hostCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(
    'host',
    args,
    {
      redis: { type: 'string' },
      queue: { type: 'string' },
      prefix: { type: 'string' },
      threads: { type: 'string' },
      concurrency: { type: 'string' },
      'secret-env': { type: 'string' },
      config: { type: 'string' },
      telemetry: { type: 'boolean' },
    },
    [],
  );
  const redis = stringFlag(values, 'redis');
  if (redis === undefined || !/^rediss?:\/\//.test(redis))
    throw new UsageError('brood host: --redis <redis://host:port> is required (see brood --help)');
  const queue = nameFlag(values, 'queue', DEFAULTS.queue.name);
  const prefix = nameFlag(values, 'prefix', DEFAULTS.queue.prefix);
  const threads = countFlag(values, 'threads', Math.max(1, availableParallelism()), DEFAULTS.maxPoolThreads);
  const concurrency = countFlag(values, 'concurrency', 64, 100_000);
  const secret = secretFlag(values);
  const codeProviders = await configFlag(values);
  requireOptionalPeers('brood host', 'queue');
  if (values.telemetry === true) requireOptionalPeers('brood host --telemetry', 'telemetry');
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const { QueueHost } = await import('../queue/host.js');
  const tracing =
    values.telemetry === true ? await (await import('../queue/host-trace.js')).HostTracing.load(log) : undefined;
  const host = new QueueHost({
    redis,
    queue,
    prefix,
    threads,
    concurrency,
    log,
    ...(secret ? { secret } : {}),
    ...(codeProviders ? { codeProviders } : {}),
    ...(tracing ? { tracing } : {}),
  });
  await host.start();
  // Listening before the ready line: a supervisor may signal the moment it reads it.
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  log(`brood host ready ${queue} threads=${threads} concurrency=${concurrency}`);
  await stopped;
  await host.stop();
  return 0;
}

/** The secret is read from the environment: a flag's value would show in `ps`. */
function secretFlag(values: Record<string, unknown>): string | undefined {
  const name = stringFlag(values as never, 'secret-env');
  if (name === undefined) return undefined;
  const secret = process.env[name];
  if (secret === undefined || secret.length < QUEUE_SECRET_MIN_LENGTH)
    throw new UsageError(
      `brood host: --secret-env ${name}: the variable must hold the queueRunner secret (at least ${QUEUE_SECRET_MIN_LENGTH} characters)`,
    );
  return secret;
}

/** The host's own adapter modules (src/queue/host-config.ts); a config it cannot use is a usage error. */
async function configFlag(values: Record<string, unknown>): Promise<HostCodeProvider[] | undefined> {
  const file = stringFlag(values as never, 'config');
  if (file === undefined) return undefined;
  const { readHostConfig } = await import('../queue/host-config.js');
  try {
    return await readHostConfig(file);
  } catch (error) {
    throw new UsageError(errorMessage(error));
  }
}

function nameFlag(values: Record<string, unknown>, name: string, fallback: string): string {
  const value = stringFlag(values as never, name);
  if (value === undefined) return fallback;
  if (!NAME.test(value)) throw new UsageError(`brood host: --${name} must be letters, digits, _ . - (at most 64)`);
  return value;
}

function countFlag(values: Record<string, unknown>, name: string, fallback: number, max: number): number {
  const value = stringFlag(values as never, name);
  if (value === undefined) return fallback;
  const count = Number(value);
  if (!Number.isSafeInteger(count) || count < 1 || count > max)
    throw new UsageError(`brood host: --${name} must be an integer from 1 to ${max}`);
  return count;
}
