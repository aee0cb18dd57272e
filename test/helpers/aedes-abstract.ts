import assert from 'node:assert';
import { createRequire } from 'node:module';
import { it } from 'vitest';

/**
 * aedes-persistence's own abstract test suite (the contract every aedes persistence must pass),
 * run as vitest tests. The suite is written for node:test; this thin adapter runs each of its
 * tests as a vitest test, with the same loose assertions (node:assert's legacy mode, as
 * node:test's `t.assert` is). Call it inside a `describe`.
 */
const require = createRequire(import.meta.url);
const abstractSuite = require('aedes-persistence/abstract.js') as (opts: unknown) => void;

interface NodeTestContext {
  plan(n: number): void;
  diagnostic(msg: string): void;
  assert: typeof assert;
}

export function runAedesAbstractSuite(opts: {
  /** A new, empty persistence (the suite calls its async setup with a broker of its own). */
  persistence: () => Promise<object>;
  /** The broker's emitter the suite hands the persistence (default: mqemitter, in memory). */
  buildEmitter?: () => object;
}): void {
  abstractSuite({
    testAsync: true,
    test: (name: string, fn: (t: NodeTestContext) => Promise<void>) =>
      it(name, { timeout: 20_000 }, () => fn({ plan() {}, diagnostic() {}, assert })),
    persistence: opts.persistence,
    ...(opts.buildEmitter ? { buildEmitter: opts.buildEmitter } : {}),
  });
}
