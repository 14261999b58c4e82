/**
 * The `brood` command line as a function (SPEC §14): argv in, exit code out, with the output streams
 * passed in. The bin (main.ts) calls it with the process's own streams; tests call it in process.
 * Exit codes: 0 success; 1 a failure while running (including an agent that did not complete); 2 bad
 * flags or bad config, reported as exactly one line on stderr.
 */

import { broodVersion } from '../version.js';
import { ACP_HELP, ACP_USAGE, acpCommand } from './acp.js';
import { type CliStreams, oneLine, UsageError } from './cli-errors.js';
import { DEMO_HELP, DEMO_USAGE, demoCommand } from './demo.js';
import { HOST_HELP, HOST_USAGE, hostCommand } from './host.js';
import { INSPECT_HELP, INSPECT_USAGE, inspectCommand } from './inspect.js';
import { MCP_HELP, MCP_USAGE, mcpCommand } from './mcp.js';
import { RESUME_HELP, RESUME_USAGE, resumeCommand } from './resume.js';
import { RUN_HELP, RUN_USAGE, runCommand } from './run.js';
import { TRACE_HELP, TRACE_USAGE, traceCommand } from './trace.js';

/**
 * A command writes its output to the streams it is given; the commands that own the terminal or a
 * protocol on stdin/stdout (demo, run, resume, acp, host, mcp) use the process's own.
 */
const COMMANDS: Record<string, (args: string[], streams: CliStreams) => Promise<number>> = {
  demo: demoCommand,
  run: runCommand,
  resume: resumeCommand,
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
  resume: RESUME_HELP,
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
  `  ${RESUME_USAGE}`,
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

/** Runs `brood <argv>`; resolves with the exit code, and never rejects (a failure is reported). */
export async function runCommandLine(argv: string[], streams: CliStreams): Promise<number> {
  try {
    return await dispatch(argv, streams);
  } catch (error) {
    return report(error, streams);
  }
}

async function dispatch(argv: string[], streams: CliStreams): Promise<number> {
  const [command, ...rest] = argv;
  const print = (text: string): number => {
    streams.stdout.write(`${text}\n`);
    return 0;
  };
  if (command === undefined)
    throw new UsageError(
      'brood: missing command (demo, run, resume, inspect, trace, acp, host, mcp; see brood --help)',
    );
  if (command === 'help' || isHelp(command)) return print(HELP);
  if (isVersion(command)) return print(broodVersion());
  const handler = COMMANDS[command];
  if (handler === undefined)
    throw new UsageError(
      `brood: unknown command '${command}' (demo, run, resume, inspect, trace, acp, host, mcp; see brood --help)`,
    );
  // Every command answers --help/-h and --version/-v before parsing its own flags (help wins).
  if (rest.some(isHelp)) return print(COMMAND_HELP[command] ?? HELP);
  if (rest.some(isVersion)) return print(broodVersion());
  return handler(rest, streams);
}

function report(error: unknown, streams: CliStreams): number {
  if (error instanceof UsageError) {
    streams.stderr.write(`${oneLine(error.message)}\n`);
    return 2;
  }
  const message = error instanceof Error ? error.message : String(error);
  const code = typeof (error as { code?: unknown })?.code === 'string' ? ` [${(error as { code: string }).code}]` : '';
  streams.stderr.write(`brood: ${oneLine(message)}${code}\n`);
  return 1;
}
