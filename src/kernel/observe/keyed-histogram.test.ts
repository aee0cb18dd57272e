import { Histogram, Registry } from 'prom-client';
import { expect, it } from 'vitest';
import { KeyedHistogram } from './keyed-histogram.js';

const bounds = [0.001, 0.01, 0.1, 1];
const samples: [string, string, string, number][] = [
  ['GET', '/v1/regions', '200', 0.0004],
  ['GET', '/v1/regions', '200', 0.001], // on a bound: counted in it, as prom-client counts it
  ['GET', '/v1/regions', '200', 0.05],
  ['POST', '/v1/zones', '201', 3], // past every bound: only in +Inf
  ['GET', '/v1/a "quoted"\nroute\\', '404', 0.02], // label values the exposition escapes
];

it('writes the same exposition as prom-client’s Histogram for the same observations', async () => {
  const theirs = new Registry();
  const reference = new Histogram({
    name: 'h',
    help: 'help text',
    labelNames: ['method', 'route', 'status'],
    buckets: bounds,
    registers: [theirs],
  });
  const ours = new Registry();
  const keyed = new KeyedHistogram('h', 'help text', ['method', 'route', 'status'], bounds, ours);
  for (const [method, route, status, v] of samples) {
    reference.observe({ method, route, status }, v);
    keyed.observe([method, route, status], v);
  }
  expect(await ours.metrics()).toBe(await theirs.metrics());
  const json = async (r: Registry) => JSON.parse(JSON.stringify(await r.getMetricsAsJSON()));
  expect(await json(ours)).toEqual(await json(theirs));
  ours.resetMetrics();
  expect(await ours.metrics()).toBe('# HELP h help text\n# TYPE h histogram\n');
});
