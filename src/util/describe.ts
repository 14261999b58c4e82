/**
 * Renders a value for an error message so that '2' and 2, NaN and null, or -0 and 0 stay
 * distinguishable. The one renderer every validation message uses. Total: a host's value may be a
 * proxy or an object whose toString throws, and describing it must not become a second error.
 */
export function describe(value: unknown): string {
  if (Object.is(value, -0)) return '-0';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'bigint' || value === undefined) return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    try {
      return String(value);
    } catch {
      return `a ${typeof value} that cannot be printed`;
    }
  }
}
