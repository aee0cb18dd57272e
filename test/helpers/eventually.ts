/** Calls `fn` until it resolves (every 250 ms), or rethrows its last error after `withinMs`. */
export async function eventually<T>(fn: () => Promise<T>, withinMs: number): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
