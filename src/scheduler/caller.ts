/**
 * Which activation's tool call is running, across its awaits: a host tool that runs another top-level
 * agent and waits for it lends out its caller's turn slot (TurnLease.lend), or under `agents: 1`
 * the run it waits for could never be admitted. Kept only while agents are governed: an
 * AsyncLocalStorage in Node 20 hooks every promise the process makes.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { TurnLease } from './turn-lease.js';

export class CallerScope {
  private storage: AsyncLocalStorage<TurnLease> | undefined;

  /** Runs `work` (a tool call made on `lease`, its activation's) as that activation's. */
  run<T>(lease: TurnLease, work: () => T): T {
    this.storage ??= new AsyncLocalStorage<TurnLease>();
    return this.storage.run(lease, work);
  }

  /** The lease of the activation whose tool call is running here, if any. */
  current(): TurnLease | undefined {
    return this.storage?.getStore();
  }
}
