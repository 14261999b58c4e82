// A benchmark must report a hang, not become one: every measured run gets a deadline.
export async function withDeadline(promise, ms, what) {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs one measurement; an exception becomes `{ error }` in the results instead of aborting the suite. */
export async function attempt(fn) {
  try {
    return await fn();
  } catch (error) {
    return { error: String(error?.message ?? error) };
  }
}
