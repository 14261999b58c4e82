/**
 * `maxSteps` as a stop condition (vercel/ai's `stepCountIs` is the model): once a turn has made
 * `maxSteps` model requests it asks for no more. The tool calls of its last response do not run (each
 * gets an error result, so the history stays well-formed) and the turn ends with stop reason
 * 'max-steps' (SPEC §7).
 */

/** Checked after each response that asks for tools, before they run. */
export interface StopCondition {
  /** True when the turn stops here instead of running the response's calls. */
  isMet(turn: { readonly requests: number }): boolean;
  /** The error text each call that did not run gets as its result. */
  readonly notRun: string;
  /** The turn's diagnostic, with `pending` calls of the last response not run. */
  diagnostic(pending: number): string;
}

export function stepCountIs(maxSteps: number): StopCondition {
  return {
    isMet: (turn) => turn.requests >= maxSteps,
    notRun: `not run: the turn reached its step limit (maxSteps ${maxSteps})`,
    diagnostic: (pending) =>
      `the turn reached its step limit: ${maxSteps} model requests (maxSteps ${maxSteps}); ${pending} tool call${pending === 1 ? '' : 's'} of the last response did not run`,
  };
}
