#!/usr/bin/env node
/** The `brood` bin (SPEC §14): the command line of cli.ts on this process's argv and streams. */
import { runCommandLine } from './cli.js';

// exitCode rather than exit(): let pending stdout writes (a piped trace can be large) drain first.
runCommandLine(process.argv.slice(2), process).then((code) => {
  process.exitCode = code;
});
