/**
 * `brood acp --config <file.json>`: brood as an ACP agent on stdio, for editors (Zed, ...) and for
 * another brood's `acpProvider`. The config is the `brood run` format (its `prompt` is not used); each
 * ACP session is a top-level agent of it. stdout carries protocol only: logs go to stderr.
 */
import { requireOptionalPeers } from '../util/optional-peers.js';
import { commandHelp, parseFlags, stringFlag, UsageError } from './cli-errors.js';
import { agentFromConfig, runtimeFromConfig } from './run.js';
import { loadRunConfig } from './run-config.js';

export const ACP_USAGE = 'brood acp --config <file.json>';

export const ACP_HELP = commandHelp(ACP_USAGE, [
  "Serves the Agent Client Protocol on stdio (for editors such as Zed, or another brood's acpProvider).",
  'The config is the `brood run` format; each ACP session is a top-level agent of it. stdout carries',
  'protocol only; logs go to stderr.',
]);

export async function acpCommand(args: string[]): Promise<number> {
  const { values } = parseFlags('acp', args, { config: { type: 'string' } }, []);
  const file = stringFlag(values, 'config');
  if (file === undefined) throw new UsageError('brood acp: --config <file.json> is required (see brood --help)');
  requireOptionalPeers('brood acp', 'acp');
  // Anything that would print to stdout would corrupt the protocol stream.
  console.log = console.error;
  console.info = console.error;
  const config = await loadRunConfig(file).catch(relabel);
  const brood = await runtimeFromConfig(config).catch(relabel);
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const { serveAcp } = await import('../acp/server/agent-server.js');
  // Whatever ends the process is said on stderr: an editor shows it, stdout cannot carry it.
  let stopped: string | undefined;
  const stop = (why: string): void => {
    stopped ??= why;
    process.stdin.destroy();
  };
  process.once('SIGTERM', () => stop('received SIGTERM'));
  process.once('SIGINT', () => stop('received SIGINT'));
  // The client gone while brood writes (EPIPE): unheard, the 'error' would crash the process.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => stop(`stdout failed (${error.code ?? error.message})`));
  let ended: string;
  try {
    ended = await serveAcp({
      brood,
      createAgent: () => agentFromConfig(brood, config),
      input: process.stdin,
      output: process.stdout,
      log,
    });
  } finally {
    await brood.close();
  }
  log(`brood acp: ${stopped ?? ended}; exiting`);
  return 0;
}

/** Config problems come from the shared `brood run` loader; say which command reported them. */
function relabel(error: unknown): never {
  if (error instanceof UsageError) throw new UsageError(error.message.replace(/^brood run:/, 'brood acp:'));
  throw error;
}
