/**
 * Calls `fn` until it resolves, or rethrows its last error after `withinMs`. It tries again soon
 * at first (most conditions hold within a few tens of milliseconds), then every 250 ms, so a slow
 * condition is not polled hard on a busy machine.
 */
export async function eventually<T>(fn: () => Promise<T>, withinMs: number): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (let wait = 10; ; wait = Math.min(wait * 2, 250)) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
