/**
 * Empty collections shared by every fresh turn for what only a resumed turn has (interrupted calls,
 * open approval requests): a wide fan-out's children would otherwise each hold two empty ones. They
 * answer reads and removals like any empty collection and refuse additions, so a caller that meant
 * to fill one gets an error instead of filling everybody's.
 */
import { BroodError } from '../errors.js';

const refuse = (): never => {
  throw new BroodError('INTERNAL', 'a fresh turn has no interrupted calls: a resumed turn makes its own');
};

class EmptyMap<K, V> extends Map<K, V> {
  override set(): this {
    return refuse();
  }
}

class EmptySet<T> extends Set<T> {
  override add(): this {
    return refuse();
  }
}

export const NO_INTERRUPTED_CALLS: Map<string, never> = new EmptyMap();
export const NO_OPEN_REQUESTS: Set<string> = new EmptySet();
