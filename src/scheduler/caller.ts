/**
 * Which agent's tool call is running, across its awaits: a host tool that runs another top-level
 * agent and waits for it lends out its caller's turn slot (Scheduler.waitOn), or under `agents: 1`
 * the run it waits for could never be admitted. Kept only while agents are governed: an
 * AsyncLocalStorage in Node 20 hooks every promise the process makes.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The agent whose tool call is running, and whether its activation still runs (it wants its slot back). */
export interface ToolCaller {
  readonly agent: { readonly id: string; readonly depth: number };
  readonly running: () => boolean;
}

export class CallerScope {
  private storage: AsyncLocalStorage<ToolCaller> | undefined;

  /** Runs `work` (a tool call of `caller.agent`) as that agent's. */
  run<T>(caller: ToolCaller, work: () => T): T {
    this.storage ??= new AsyncLocalStorage<ToolCaller>();
    return this.storage.run(caller, work);
  }

  /** The agent whose tool call is running here, if any. */
  current(): ToolCaller | undefined {
    return this.storage?.getStore();
  }
}
