#!/usr/bin/env node
/**
 * The `brood` bin (SPEC §14). Exit codes: 0 success; 1 a failure while running (including an agent
 * that did not complete); 2 bad flags or bad config, reported as exactly one line on stderr.
 */
import { acpCommand, ACP_HELP, ACP_USAGE } from './acp.js';
import { demoCommand, DEMO_HELP, DEMO_USAGE } from './demo.js';
import { hostCommand, HOST_HELP, HOST_USAGE } from './host.js';
import { inspectCommand, INSPECT_HELP, INSPECT_USAGE } from './inspect.js';
import { mcpCommand, MCP_HELP, MCP_USAGE } from './mcp.js';
import { runCommand, RUN_HELP, RUN_USAGE } from './run.js';
import { traceCommand, TRACE_HELP, TRACE_USAGE } from './trace.js';
import { oneLine, UsageError } from './cli-errors.js';
import { broodVersion } from '../version.js';

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  demo: demoCommand,
  run: runCommand,
  inspect: inspectCommand,
  trace: traceCommand,
  acp: acpCommand,
  host: hostCommand,
  mcp: mcpCommand,
};

/** `brood <command> --help`; a command without its own text answers with the overview. */
const COMMAND_HELP: Record<string, string> = {
  demo: DEMO_HELP,
  run: RUN_HELP,
  inspect: INSPECT_HELP,
  trace: TRACE_HELP,
  acp: ACP_HELP,
  host: HOST_HELP,
  mcp: MCP_HELP,
};

const HELP = [
  'brood — LLM agents delegating to subagents on worker threads',
  '',
  'Usage:',
  `  ${DEMO_USAGE}`,
  `  ${RUN_USAGE}`,
  `  ${INSPECT_USAGE}`,
  `  ${TRACE_USAGE}`,
  `  ${ACP_USAGE}`,
  `  ${HOST_USAGE}`,
  `  ${MCP_USAGE}`,
  '  brood [<command>] --help | -h',
  '  brood [<command>] --version | -v',
  '',
  'Exit codes: 0 ok, 1 failure while running, 2 bad flags or config.',
].join('\n');

const isHelp = (arg: string): boolean => arg === '--help' || arg === '-h';
const isVersion = (arg: string): boolean => arg === '--version' || arg === '-v';

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined)
    throw new UsageError('brood: missing command (demo, run, inspect, trace, acp, host, mcp; see brood --help)');
  if (command === 'help' || isHelp(command)) return print(HELP);
  if (isVersion(command)) return print(broodVersion());
  const handler = COMMANDS[command];
  if (handler === undefined)
    throw new UsageError(
      `brood: unknown command '${command}' (demo, run, inspect, trace, acp, host, mcp; see brood --help)`,
    );
  // Every command answers --help/-h and --version/-v before parsing its own flags (help wins).
  if (rest.some(isHelp)) return print(COMMAND_HELP[command] ?? HELP);
  if (rest.some(isVersion)) return print(broodVersion());
  return handler(rest);
}

function print(text: string): number {
  process.stdout.write(`${text}\n`);
  return 0;
}

function report(error: unknown): number {
  if (error instanceof UsageError) {
    process.stderr.write(`${oneLine(error.message)}\n`);
    return 2;
  }
  const message = error instanceof Error ? error.message : String(error);
  const code = typeof (error as { code?: unknown })?.code === 'string' ? ` [${(error as { code: string }).code}]` : '';
  process.stderr.write(`brood: ${oneLine(message)}${code}\n`);
  return 1;
}

// exitCode rather than exit(): let pending stdout writes (a piped trace can be large) drain first.
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.exitCode = report(error);
  },
);
