/**
 * The `echo` tool of the tool-hook suites: answers `ran <text>` and records each body that ran in
 * `runs`, so a test can tell a call its hook refused from one that reached the tool. `text === 'throw'`
 * makes the body throw, when a suite asks for it.
 */
import { z } from 'zod';
import { defineTool } from '../../src/index.js';

export function echoTool(runs: unknown[], { throwing = false } = {}) {
  return defineTool({
    name: 'echo',
    description: 'echoes its text',
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => {
      runs.push(text);
      if (throwing && text === 'throw') throw new TypeError('echo broke');
      return `ran ${text}`;
    },
  });
}
