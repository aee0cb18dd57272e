import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dnsServerOf, untilServed } from '../helpers/dns-records.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * Domain verification against Fjord's own DNS server as the resolver: records made through the
 * DNS API verify a domain; a domain in an active Fjord zone verifies without one.
 */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let t: TestFjord;
let c: TestCustomer;

beforeAll(async () => {
  const port = await freePort();
  t = await TestFjord.create({ FJORD_DNS_PORT: String(port), FJORD_RESOLVER: `127.0.0.1:${port}` });
  await t.fjord.start(['dns']);
  c = await t.customer();
});
afterAll(() => t.close());

const verify = (id: string) =>
  t.request('POST', `/v1/domain-verification/domains/${id}/verify`, { key: c.pat });

describe('domain verification through Fjord DNS', () => {
  it('verifies with a TXT record made through the DNS API, and not without it', async () => {
    // A zone of another customer hosts the domain: the verifying customer still needs the record.
    const owner = await t.customer();
    expect(
      (await t.request('POST', '/v1/dns/zones', { key: owner.pat, body: { domain: 'txt-e2e.com' } })).status,
    ).toBe(201);
    const d = (
      await t.request('POST', '/v1/domain-verification/domains', {
        key: c.pat,
        body: { domain: 'txt-e2e.com', purpose: 'email' },
      })
    ).body;
    expect(d.verification_method).toBe('DNS_TXT');

    await dnsServerOf(t).settled();
    const missing = await verify(d.id);
    expect(missing.body).toMatchObject({ verified: false, status: 'pending', dns_records_found: [] });

    const record = await t.request('POST', '/v1/dns/zones/txt-e2e.com/records', {
      key: owner.pat,
      body: { record_type: 'TXT', host: '_fjord', record: d.instructions.record_value, ttl: 300 },
    });
    expect(record.status).toBe(201);
    await untilServed(t, '_fjord.txt-e2e.com', 'TXT', (v) => v.includes(d.instructions.record_value));
    const ok = await verify(d.id);
    expect(ok.body).toMatchObject({ verified: true, status: 'verified' });
    expect(ok.body.dns_records_found).toEqual([d.instructions.record_value]);
  });

  it('verifies a domain in the customer’s active Fjord zone at once (INTERNAL_DNS_AUTHORITY)', async () => {
    const zone = await t.request('POST', '/v1/dns/zones', {
      key: c.pat,
      body: { domain: 'internal-e2e.com' },
    });
    expect(zone.status).toBe(201);
    // The delegation check asks the resolver (Fjord itself here) for the zone's NS records.
    await untilServed(t, 'internal-e2e.com', 'NS', (v) => v.length > 0);
    await t.advance(600);
    expect((await t.request('GET', '/v1/dns/zones/internal-e2e.com', { key: c.pat })).body.status).toBe(
      'active',
    );

    const d = await t.request('POST', '/v1/domain-verification/domains', {
      key: c.pat,
      body: { domain: 'mail.internal-e2e.com', purpose: 'email', verification_method: 'DNS_TXT' },
    });
    expect(d.status).toBe(201);
    expect(d.body).toMatchObject({
      status: 'verified',
      verification_method: 'INTERNAL_DNS_AUTHORITY',
      verification_token: null,
      internal_dns_zone_id: zone.body.id,
      instructions: { auto_verified: true },
    });
    expect(d.body.verified_at).not.toBeNull();
  });
});
