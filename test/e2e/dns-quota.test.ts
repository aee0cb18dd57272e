// The plan's DNS queries per month, enforced by the servers: once a customer's month reaches the
// quota its zones get REFUSED (seen by dig) until a larger plan or the next month, while other
// customers' zones keep answering.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DnsServer } from '../../src/areas/dns/server/index.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { dig } from './dns-fixtures.js';

let t: TestFjord;
let server: DnsServer;
let port: number;

const status = async (name: string) => /status: (\w+)/.exec(await dig(port, name, 'A'))?.[1];

/** Polls dig until the name gets `want`: pauses reach the server through the store's change feed. */
async function eventually(name: string, want: string): Promise<void> {
  let got: string | undefined;
  for (let i = 0; i < 60; i++) {
    got = await status(name);
    if (got === want) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name}: ${got}, not ${want}`);
}

async function customerWithZone(zone: string): Promise<TestCustomer> {
  const c = await t.customer();
  expect((await t.request('POST', '/v1/dns/zones', { key: c.pat, body: { domain: zone } })).status).toBe(201);
  const r = await t.request('POST', `/v1/dns/zones/${zone}/records`, {
    key: c.pat,
    body: { record_type: 'A', host: 'www', record: '192.0.2.7' },
  });
  expect(r.status, r.text).toBe(201);
  await eventually(`www.${zone}`, 'NOERROR');
  return c;
}

beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_DNS_PORT: '0',
    FJORD_DNS_RRL_RATE: '0',
    FJORD_LIMITS: JSON.stringify({ 'dns.queries_per_month': { free: 6 } }),
  });
  await t.fjord.start(['dns']);
  server = t.fjord.areas.get('dns')!.servers!.find((s) => s.role === 'dns') as DnsServer;
  port = server.port()!;
});

afterAll(async () => {
  await t?.fjord.stop();
  await t?.close();
});

describe('DNS queries per month', () => {
  it('pauses a customer’s zones at the quota, leaves others answering, and resumes on a larger plan', async () => {
    const a = await customerWithZone('quota-a.example');
    const b = await customerWithZone('quota-b.example');
    for (let i = 0; i < 6; i++) expect(await status('www.quota-a.example')).toBe('NOERROR');
    await server.flushStats();
    await eventually('www.quota-a.example', 'REFUSED');
    expect(await status('www.quota-b.example')).toBe('NOERROR');

    const usage = await t.request('GET', '/v1/dns/usage', { key: a.pat });
    expect(usage.status).toBe(200);
    expect(usage.body).toMatchObject({
      plan: 'free',
      zones: { used: 1, limit: 3 },
      queries: { limit: 6, remaining: 0, paused: true },
    });
    expect(usage.body.queries.used).toBeGreaterThanOrEqual(6);
    expect((await t.request('GET', '/v1/dns/usage', { key: b.pat })).body.queries.paused).toBe(false);

    // A larger plan: the next review (every 5 minutes) serves the zones again.
    expect((await t.operator('PUT', `/admin/v1/customers/${a.id}/plan`, { plan: 'basic' })).status).toBe(200);
    await t.advance(301);
    await eventually('www.quota-a.example', 'NOERROR');
    expect((await t.request('GET', '/v1/dns/usage', { key: a.pat })).body.queries).toMatchObject({
      limit: 10_000_000,
      paused: false,
      paused_at: null,
    });
  });

  it('resumes at the turn of the month', async () => {
    const c = await customerWithZone('quota-c.example');
    for (let i = 0; i < 6; i++) await status('www.quota-c.example');
    await server.flushStats();
    await eventually('www.quota-c.example', 'REFUSED');
    const { resets_at } = (await t.request('GET', '/v1/dns/usage', { key: c.pat })).body.queries;
    const now = Date.parse((await t.advance(0)).now);
    await t.advance(Math.ceil((Date.parse(resets_at) - now) / 1000) + 301);
    await eventually('www.quota-c.example', 'NOERROR');
    const usage = (await t.request('GET', '/v1/dns/usage', { key: c.pat })).body.queries;
    expect(usage).toMatchObject({ paused: false, limit: 6 });
    expect(usage.month).toBe(resets_at.slice(0, 7));
  });
});
