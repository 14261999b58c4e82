/**
 * Waits until `check` holds, polling every 10 ms. No wall-clock assertion: the test's own timeout
 * bounds the wait, so a slow machine makes a test slower, never red.
 */
export async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 10));
}
