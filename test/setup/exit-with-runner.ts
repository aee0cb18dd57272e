/**
 * Every test file's setup: a worker process ends when the vitest process that started it is gone.
 *
 * A forked worker outlived its runner after a run that ended abnormally, and then any error left
 * by a test (a late timer, a socket reset) went to vitest's uncaught-exception handler, which
 * reports it to the runner over the closed channel, which throws again: an endless loop at full
 * CPU with a growing heap. Orphans like that slowed every later tier of the run.
 * SIGKILL, not process.exit: vitest replaces process.exit in its workers, and nothing the worker
 * still holds can be flushed anywhere once the runner is gone.
 */
const key = Symbol.for('fjord.test.exitWithRunner');
const marked = globalThis as { [key]?: true };

// The setup runs before each file, and a worker runs many files (isolate: false): once per process.
if (!marked[key] && typeof process.send === 'function') {
  marked[key] = true;
  process.once('disconnect', () => process.kill(process.pid, 'SIGKILL'));
}
