// The contract fuzzer of the test suite with a larger budget and a seed of your choice.
//
//   npm run bench:fuzz [-- --per-operation 200 --seed 7]
//
// Every operation of the served OpenAPI document gets `--per-operation` valid and hostile
// requests (see test/helpers/contract-fuzz.ts); the run prints requests per second and every
// finding: a 5xx, an undeclared status, or a body off its declared schema. Exit code 1 on any.
import { parseArgs } from 'node:util';
import { fuzzedFjord } from '../test/helpers/contract-fuzz.js';

const { values: args } = parseArgs({
  options: {
    'per-operation': { type: 'string', default: '200' },
    seed: { type: 'string', default: String(Date.now() % 1e9) },
  },
});

const { t, fuzz } = await fuzzedFjord(Number(args.seed));
try {
  const t0 = performance.now();
  await fuzz.run(Number(args['per-operation']));
  const seconds = (performance.now() - t0) / 1000;
  console.log(
    `seed ${args.seed}: ${fuzz.sent} requests over ${fuzz.operations().length} operations in ${seconds.toFixed(1)} s (${Math.round(fuzz.sent / seconds)} req/s), ${fuzz.findings.length} findings`,
  );
  for (const f of fuzz.findings.slice(0, 200)) console.log(`${f.status} ${f.problem}\n    ${f.request}`);
  process.exitCode = fuzz.findings.length ? 1 : 0;
} finally {
  await t.close();
}
