/**
 * The turn a crash left open (turn/start logged, no turn/end), as its log shows it: what a resumed
 * agent continues from. Nothing answered is asked again (the answers are in the history), and each
 * call of the latest answer is in one of three states: its result is logged (done), its `tool/call`
 * is logged but no result (outcome unknown: it may have run), or neither (it never ran).
 */
import { addUsage } from '../models/usage.js';
import { knownEvent, parsedToolArguments } from '../sessions/event-types.js';
import { STRUCTURED_OUTPUT_TOOL } from '../tools/layer.js';
import type { SessionEvent, Usage } from '../types.js';
import type { FinishedChildren } from './finished-children.js';
import type { StructuredTurn } from './structured-turn.js';

export interface InterruptedCall {
  name: string;
  arguments: string;
}

export interface OpenTurn {
  turn: number;
  /** The message the turn claimed (its run() result is this turn's). */
  messageId: string;
  /** The turn's own usage and latest output, from its logged assistant messages. */
  usage: Usage;
  output: string;
  /** `finish` of the turn's latest logged assistant message. */
  lastFinish: string | undefined;
  /** Calls of the latest answer whose `tool/call` is logged and whose result is not. */
  interrupted: Map<string, InterruptedCall>;
  /** A model request was logged after the latest answer: it was in flight and is sent again. */
  requestInFlight: boolean;
  /** The claimed message's own budget and output schema, as its `turn/start` recorded them (unchecked). */
  budget?: unknown;
  outputSchema?: unknown;
  /** The turn's last valid `structured_output` call before the crash (the last valid call wins). */
  structured?: { value: unknown };
}

/** The open turn of `events`, or undefined when every turn ended. */
export function openTurnOf(events: readonly SessionEvent[]): OpenTurn | undefined {
  let open: OpenTurn | undefined;
  for (const logged of events) {
    const event = knownEvent(logged);
    switch (event?.type) {
      case 'turn/start': {
        const { budget, outputSchema } = event.data;
        open = {
          turn: event.data.turn,
          messageId: event.data.messageIds[0] ?? '',
          usage: { inputTokens: 0, outputTokens: 0 },
          output: '',
          lastFinish: undefined,
          interrupted: new Map(),
          requestInFlight: false,
          ...(budget === undefined ? {} : { budget }),
          ...(outputSchema === undefined ? {} : { outputSchema }),
        };
        break;
      }
      case 'turn/end':
        open = undefined;
        break;
      case 'model/request':
        if (open) open.requestInFlight = true;
        break;
      case 'assistant/message':
        if (!open) break;
        addUsage(open.usage, event.data.usage);
        if (event.data.text.trim() !== '') open.output = event.data.text;
        open.lastFinish = event.data.finish;
        open.interrupted.clear();
        open.requestInFlight = false;
        break;
      case 'tool/call':
        open?.interrupted.set(event.data.callId, { name: event.data.name, arguments: event.data.arguments });
        break;
      case 'tool/result': {
        const call = open?.interrupted.get(event.data.callId);
        open?.interrupted.delete(event.data.callId);
        // What the turn tool recorded: the arguments it ran with (a hook may have rewritten them).
        if (open && call && event.data.name === STRUCTURED_OUTPUT_TOOL && !event.data.isError)
          open.structured = { value: parsedToolArguments(event.data.arguments ?? call.arguments) };
        break;
      }
      default:
        break;
    }
  }
  return open;
}

/** What a turn a crash left open resumes with, besides what its log shows (src/agents/open-turn.ts). */
export interface ResumeInputs {
  /** Calls whose approval request is still open: they never ran and wait for the host. */
  awaitingApproval: ReadonlySet<string>;
  /** The per-request context the resume gave (never stored). */
  context?: unknown;
  structured?: StructuredTurn | undefined;
  /** The children the turn had finished, read before its driver starts again. */
  finished?: Promise<FinishedChildren>;
}
