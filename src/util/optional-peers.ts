/**
 * brood's optional peer dependencies: the MCP SDK, the ACP SDK and BullMQ/ioredis are installed only by
 * hosts that use the feature needing them. Each feature probes for its packages when it is configured
 * (`mcpTools` at use(), `acpProvider()`, `queueRunner()`, `brood acp`, `brood host`), so a missing
 * package is one MISSING_DEPENDENCY error there — never a failure in the middle of a turn, where the
 * package is finally imported.
 */
import { createRequire } from 'node:module';
import { BroodError } from '../errors.js';

interface OptionalPeer {
  readonly name: string;
  /** The range in package.json's peerDependencies (test/packaging checks they agree). */
  readonly range: string;
  /** A specifier brood imports: resolving it proves the package is reachable from brood. */
  readonly entry: string;
}

export const OPTIONAL_PEERS = {
  mcp: [{ name: '@modelcontextprotocol/sdk', range: '^1.32.2', entry: '@modelcontextprotocol/sdk/client/index.js' }],
  acp: [{ name: '@agentclientprotocol/sdk', range: '^2.4.0', entry: '@agentclientprotocol/sdk' }],
  queue: [
    { name: 'bullmq', range: '^6.7.0', entry: 'bullmq' },
    { name: 'ioredis', range: '^5.11.1', entry: 'ioredis' },
  ],
  telemetry: [{ name: '@opentelemetry/api', range: '~1.9.0', entry: '@opentelemetry/api' }],
} as const satisfies Record<string, readonly OptionalPeer[]>;

export type OptionalFeature = keyof typeof OPTIONAL_PEERS;

/**
 * Throws MISSING_DEPENDENCY (naming the packages and the install command) when a package `feature`
 * needs cannot be resolved from brood. `user` is what the host called, for the message.
 */
export function requireOptionalPeers(user: string, feature: OptionalFeature): void {
  const missing = OPTIONAL_PEERS[feature].filter((peer) => !resolvable(peer.entry));
  if (missing.length === 0) return;
  const names = missing.map((peer) => peer.name);
  const install = `npm install ${missing.map((peer) => `${peer.name}@${peer.range}`).join(' ')}`;
  const verb =
    missing.length === 1
      ? 'is an optional peer dependency of brood that is'
      : 'are optional peer dependencies of brood that are';
  throw new BroodError(
    'MISSING_DEPENDENCY',
    `${user} needs ${names.join(' and ')}, which ${verb} not installed: run \`${install}\``,
    {
      details: { packages: names, install },
    },
  );
}

function resolvable(entry: string): boolean {
  try {
    resolveFromBrood(entry);
    return true;
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    // Anything else (say, an exports map that refuses this condition) means the package is there: the
    // real import reports whatever is wrong with it.
    return code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND';
  }
}

/** The ES resolver the later `import()` uses; Node 20.0–20.5 have it only behind a flag, so CommonJS's there. */
function resolveFromBrood(specifier: string): string {
  if (typeof import.meta.resolve === 'function') return import.meta.resolve(specifier);
  return createRequire(import.meta.url).resolve(specifier);
}
