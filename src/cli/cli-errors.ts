/**
 * CLI failure kinds and flag parsing (SPEC §14). The exit code is decided by the kind of failure, not
 * by where it was thrown: anything the user can fix by changing the command line or the config file is
 * a UsageError (exit 2, one line); anything that goes wrong while running is exit 1.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';

/** Where a command writes: the process's stdout and stderr, or a test's buffers. */
export interface CliStreams {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** Bad flags, bad arguments, bad config: reported as one line on stderr, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Collapses any message to one line, so "one clear line on stderr" holds for multi-line causes too. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

type Options = NonNullable<ParseArgsConfig['options']>;
export type FlagValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/**
 * `parseArgs` in strict mode, with its errors turned into UsageErrors that name the command.
 * `names` lists the positional arguments the command takes, exactly; `optional` those it may take
 * after them (undefined when not given).
 */
export function parseFlags<const Names extends readonly string[], const Optional extends readonly string[] = []>(
  command: string,
  args: string[],
  options: Options,
  names: Names,
  optional?: Optional,
): {
  values: FlagValues;
  positionals: { [K in keyof Names]: string };
  optionals: { [K in keyof Optional]: string | undefined };
} {
  let parsed: { values: FlagValues; positionals: string[] };
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    // Node's messages add a paragraph about `--`; the first sentence is the useful part.
    const message = error instanceof Error ? (error.message.split('. ')[0] ?? error.message) : String(error);
    throw new UsageError(`brood ${command}: ${oneLine(message)} (see brood --help)`);
  }
  const extra = optional ?? [];
  const given = parsed.positionals.length;
  if (given < names.length || given > names.length + extra.length) {
    const wanted = [...names.map((n) => `<${n}>`), ...extra.map((n) => `[<${n}>]`)];
    const want = wanted.length === 0 ? 'no arguments' : wanted.join(' ');
    throw new UsageError(`brood ${command}: expected ${want}, got ${given} argument(s) (see brood --help)`);
  }
  // Checked just above: one positional per name, then at most one per optional name.
  return {
    values: parsed.values,
    positionals: parsed.positionals.slice(0, names.length) as { [K in keyof Names]: string },
    optionals: extra.map((_, i) => parsed.positionals[names.length + i]) as {
      [K in keyof Optional]: string | undefined;
    },
  };
}

/** A string flag's value; parseArgs already rejected a missing value for `type: 'string'`. */
export function stringFlag(values: FlagValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** A subcommand's `--help`: its usage line, a blank line, then what it does. */
export function commandHelp(usage: string, description: string[]): string {
  return [`Usage: ${usage}`, '', ...description].join('\n');
}
