/** What one turn of the driver loop accumulates, and how a recovered activation finds where its turn stood. */
import type { ChatMessage } from '../models/types.js';
import { addUsage } from '../models/usage.js';
import type { Usage } from '../types.js';
import type { TurnReport } from '../wire/protocol.js';

/** A turn whose last logged response was final only needs ending after a recovery. */
export const FINAL_FINISHES: Record<string, TurnReport['stopReason'] | undefined> = {
  stop: 'completed',
  'max-tokens': 'max-tokens',
  refusal: 'refusal',
  error: 'error',
};

/** Model requests already made in the turn a recovery continues (assistant messages since its user message). */
export function requestsSinceUserMessage(history: readonly ChatMessage[]): number {
  let count = 0;
  for (let index = history.length - 1; index >= 0 && history[index]?.role !== 'user'; index -= 1) {
    if (history[index]?.role === 'assistant') count += 1;
  }
  return count;
}

export class TurnState {
  output = '';
  /** Model requests answered in this turn (the step count maxSteps bounds). */
  requests = 0;
  private readonly usage: Usage = { inputTokens: 0, outputTokens: 0 };

  constructor(readonly turn: number) {}

  addUsage(usage: Usage): void {
    addUsage(this.usage, usage);
  }

  finish(stopReason: TurnReport['stopReason'], diagnostic?: string): TurnReport {
    return {
      turn: this.turn,
      output: this.output,
      stopReason,
      usage: { ...this.usage },
      ...(diagnostic === undefined ? {} : { diagnostic }),
    };
  }
}
