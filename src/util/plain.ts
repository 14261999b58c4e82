/** True for a plain data object (`{}` or `Object.create(null)`): not an array, class instance, Map or Date. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** `object` without its keys whose value is undefined (so a spread of it never overwrites with undefined). */
export function definedEntries<T extends object>(object: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(object ?? {}).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** Every option `given` sets, over the defaults for the rest. */
export function withDefaults<T extends object>(defaults: Required<T>, given: T | undefined): Required<T> {
  return { ...defaults, ...definedEntries(given) };
}
