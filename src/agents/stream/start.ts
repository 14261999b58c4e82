/** agent.stream(): the run, with its turn's events cut out of a subscription taken before acceptance. */
import { DEFAULTS } from '../../defaults.js';
import { EventStream } from '../../events/stream.js';
import type { AgentEventsOptions, MessageInput, RunOptions, TurnResult } from '../../types.js';
import { RunStream } from './run-stream.js';
import { pumpTurn, TurnWindow } from './turn-events.js';

/** The agent as the stream sees it (the agent module imports this one, so no import back). */
export interface StreamedAgent {
  readonly id: string;
  readonly deps: {
    readonly hub: {
      subscribe(root: string, options: AgentEventsOptions | undefined): EventStream;
      readonly now: () => number;
    };
  };
  startRun(message: MessageInput, opts: RunOptions | undefined): { messageId: string; result: Promise<TurnResult> };
}

/** Bad options throw here, synchronously, with the codes run() rejects with. */
export function startStream(agent: StreamedAgent, input: MessageInput, opts: RunOptions | undefined): RunStream {
  const { hub } = agent.deps;
  const source = hub.subscribe(agent.id, undefined);
  let started: ReturnType<StreamedAgent['startRun']>;
  try {
    started = agent.startRun(input, opts);
  } catch (error) {
    void source.return();
    throw error;
  }
  // A host that stops reading stops the subscription too (the run goes on).
  const out = new EventStream(DEFAULTS.eventBuffer, agent.id, hub.now, () => void source.return());
  void pumpTurn(source, new TurnWindow(agent.id, started.messageId), out);
  // The message never ran (refused, disposed, its write failed): what was queued is all there is.
  void started.result.finally(() => source.end()).catch(() => undefined);
  return new RunStream(agent.id, out, started.result);
}
