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
  return new StepCount(maxSteps);
}

/** Methods on a prototype, the texts made only when the limit is met: every driver holds one. */
class StepCount implements StopCondition {
  constructor(private readonly maxSteps: number) {}

  isMet(turn: { readonly requests: number }): boolean {
    return turn.requests >= this.maxSteps;
  }

  get notRun(): string {
    return `not run: the turn reached its step limit (maxSteps ${this.maxSteps})`;
  }

  diagnostic(pending: number): string {
    const { maxSteps } = this;
    return `the turn reached its step limit: ${maxSteps} model requests (maxSteps ${maxSteps}); ${pending} tool call${pending === 1 ? '' : 's'} of the last response did not run`;
  }
}
