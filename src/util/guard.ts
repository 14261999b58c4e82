/**
 * Wraps an object so every method call fails with DISPOSED once its owner is gone (a disposed agent,
 * a closed runtime): async methods reject, synchronous ones throw. Properties pass through.
 */
import { BroodError } from '../errors.js';

export function guardDisposed<T extends object>(
  target: T,
  isDisposed: () => boolean,
  what: string,
  asyncMethods: readonly string[],
): T {
  const rejecting = new Set(asyncMethods);
  return new Proxy(target, {
    get(object, key, receiver) {
      const value = Reflect.get(object, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (isDisposed()) {
          const error = new BroodError('DISPOSED', `${what} is disposed`);
          if (typeof key === 'string' && rejecting.has(key)) return Promise.reject(error);
          throw error;
        }
        return (value as (...a: unknown[]) => unknown).apply(object, args);
      };
    },
  });
}
