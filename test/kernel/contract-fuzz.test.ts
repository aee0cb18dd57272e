import { expect, it } from 'vitest';
import { fuzzedFjord } from '../helpers/contract-fuzz.js';

/**
 * Every operation of the served OpenAPI document, fuzzed with a fixed seed and budget: no 5xx
 * (besides a back end's declared 502/503), only declared statuses, and bodies valid against the
 * declared schemas. `bench:fuzz` runs the same with a larger budget and another seed.
 */
it('every answer to valid and hostile requests is declared and on schema', { timeout: 300_000 }, async () => {
  const { t, fuzz } = await fuzzedFjord(20261124);
  try {
    // Half the budget on PostgreSQL: the SQLite pass sends the full one, and what the store can
    // change (constraint errors, locks, types) shows within the first requests of an operation.
    const perOperation = process.env.FJORD_TEST_STORE === 'postgres' ? 8 : 16;
    await fuzz.run(Number(process.env.FJORD_FUZZ_PER_OPERATION ?? perOperation));
    const summary = fuzz.findings.slice(0, 40).map((f) => `${f.status} ${f.problem}\n    ${f.request}`);
    expect(summary, `${fuzz.findings.length} findings in ${fuzz.sent} requests`).toEqual([]);
  } finally {
    await t.close();
  }
});
