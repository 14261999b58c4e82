/** Runs fn and returns the BroodError code it threw synchronously (or 'NO_THROW'). */
export function thrownCode(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
  return 'NO_THROW';
}
