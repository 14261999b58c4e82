/**
 * What `brood host` logs about Redis: each cause at most once a minute, not once per job or per
 * reconnection attempt. A restarted Redis that lost its data makes BullMQ fail to finish every job
 * the host held ("Missing key for job … moveToFinished", twice per job): that is said once, as what
 * happened.
 */
import { errorMessage } from '../errors.js';

const QUIET_MS = 60_000;
const MAX_CAUSES = 100;
const MISSING_KEY = /^Missing key for (?:parent )?job /;
const LOST_JOBS =
  'it no longer has the jobs this host was running (restarted without its data?); their parents re-plan them';

export class HostRedisLog {
  readonly #said = new Map<string, number>();
  readonly #write: (line: string) => void;

  constructor(write: (line: string) => void) {
    this.#write = write;
  }

  /** An 'error' listener for the host's clients and its BullMQ worker. */
  readonly error = (error: unknown): void => {
    const cause = causeOf(errorMessage(error));
    const now = Date.now();
    const last = this.#said.get(cause);
    if (last !== undefined && now - last < QUIET_MS) return;
    this.#said.set(cause, now);
    // Causes that vary (a message with a counter in it) cannot grow the map: old ones are forgotten.
    if (this.#said.size > MAX_CAUSES)
      for (const [known, at] of this.#said) if (now - at >= QUIET_MS) this.#said.delete(known);
    this.#write(`brood host: Redis: ${cause}`);
  };
}

/** One cause per kind of failure: job ids would make every job's failure a cause of its own. */
function causeOf(message: string): string {
  return MISSING_KEY.test(message) ? LOST_JOBS : message.replace(/\bjob \S+/g, 'job …');
}
