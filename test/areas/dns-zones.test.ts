import { createSocket, type Socket } from 'node:dgram';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAuthMatrix, expectTenantIsolation } from '../helpers/contracts.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/** A stand-in recursive resolver: answers NS queries from a table the test sets. */
class FakeResolver {
  readonly delegations = new Map<string, string[]>();
  queries = 0;
  private constructor(readonly socket: Socket) {}
  static async start(): Promise<FakeResolver> {
    const socket = createSocket('udp4');
    const r = new FakeResolver(socket);
    socket.on('message', (msg, rinfo) => {
      const q = dnsPacket.decode(msg);
      const question = q.questions![0]!;
      r.queries++;
      const ns = r.delegations.get(question.name.toLowerCase());
      const reply = dnsPacket.encode({
        id: q.id,
        type: 'response',
        flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (ns ? 0 : 3),
        questions: q.questions,
        answers: (ns ?? []).map((data) => ({ type: 'NS', name: question.name, ttl: 60, data })),
      });
      socket.send(reply, rinfo.port, rinfo.address);
    });
    await new Promise<void>((res) => socket.bind(0, '127.0.0.1', () => res()));
    return r;
  }
  get address() {
    return `127.0.0.1:${this.socket.address().port}`;
  }
  close() {
    this.socket.close();
  }
}

let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
let resolver: FakeResolver;

beforeAll(async () => {
  resolver = await FakeResolver.start();
  t = await TestFjord.create({
    FJORD_RESOLVER: resolver.address,
    FJORD_DNS_NAMESERVERS: 'ns1.fjord.example,ns2.fjord.example.',
  });
  a = await t.customer();
  b = await t.customer();
});
afterAll(async () => {
  await t.close();
  resolver.close();
});

describe('DNS zones', () => {
  it('creates a pending zone with the configured nameservers', async () => {
    const r = await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: 'Example.COM.' } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(String),
      name: 'example.com',
      status: 'pending',
      dnssec_enabled: false,
      record_count: 0,
      nameservers: ['ns1.fjord.example', 'ns2.fjord.example'],
      created_at: expect.stringMatching(/Z$/),
    });
    const got = await t.request('GET', '/v1/dns/zones/example.com', { key: a.pat });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(r.body);
    const list = await t.request('GET', '/v1/dns/zones', { key: a.pat });
    expect(list.body.total).toBe(1);
    expect(list.body.zones[0]).toEqual({ ...r.body, nameservers: undefined });
    expect(list.body.zones[0]).not.toHaveProperty('nameservers');
  });

  it('converts an internationalised name to punycode and finds it by either spelling', async () => {
    const r = await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: 'bücher.example' } });
    expect(r.status).toBe(201);
    expect(r.body.name).toBe('xn--bcher-kva.example');
    const byUnicode = await t.request('GET', `/v1/dns/zones/${encodeURIComponent('bücher.example')}`, {
      key: a.pat,
    });
    expect(byUnicode.status).toBe(200);
    await t.request('DELETE', '/v1/dns/zones/xn--bcher-kva.example', { key: a.pat });
  });

  it.each([
    ['com', 'at least two labels'],
    ['-bad.example', 'label'],
    ['a..b.example', 'valid'],
    ['1.2.3.4', 'IP address'],
    ['under_score.example', 'label'],
    [`${'a'.repeat(64)}.example`, 'label'],
    ['example.123', 'numeric'],
  ])('rejects the domain %s', async (domain, words) => {
    // Every attempt counts against the 10-per-hour creation limit: a key of its own.
    const r = await t.request('POST', '/v1/dns/zones', { key: (await t.customer()).pat, body: { domain } });
    expect(r.status).toBe(422);
    expect(r.body.detail.code).toBe('invalid_domain');
    expect(r.body.detail.message).toContain(words);
  });

  it('refuses a domain any customer already holds, and parts of another customer’s domain', async () => {
    const same = await t.request('POST', '/v1/dns/zones', { key: b.pat, body: { domain: 'EXAMPLE.com' } });
    expect(same.status).toBe(409);
    expect(same.body.detail.code).toBe('zone_exists');
    const again = await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: 'example.com' } });
    expect(again.status).toBe(409);
    const child = await t.request('POST', '/v1/dns/zones', {
      key: b.pat,
      body: { domain: 'shop.example.com' },
    });
    expect(child.status).toBe(409);
    expect(child.body.detail.code).toBe('zone_overlaps');
    const reserved = await t.request('POST', '/v1/dns/zones', {
      key: b.pat,
      body: { domain: 'fjord.example' },
    });
    expect(reserved.status).toBe(409);
    expect(reserved.body.detail.code).toBe('zone_reserved');
    const own = await t.request('POST', '/v1/dns/zones', {
      key: a.pat,
      body: { domain: 'shop.example.com' },
    });
    expect(own.status, own.text).toBe(201);
    await t.request('DELETE', '/v1/dns/zones/shop.example.com', { key: a.pat });
  });

  it('turns active once the delegation names only Fjord’s nameservers', async () => {
    await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: 'delegated.example' } });
    // Not delegated yet: NXDOMAIN from the resolver.
    await t.advance(1);
    expect((await t.request('GET', '/v1/dns/zones/delegated.example', { key: a.pat })).body.status).toBe(
      'pending',
    );
    // Still with another provider next to ours: pending.
    resolver.delegations.set('delegated.example', ['ns1.fjord.example', 'ns.other-provider.example']);
    await t.advance(300);
    expect((await t.request('GET', '/v1/dns/zones/delegated.example', { key: a.pat })).body.status).toBe(
      'pending',
    );
    resolver.delegations.set('delegated.example', ['NS1.fjord.example.', 'ns2.fjord.example']);
    const before = resolver.queries;
    await t.advance(300);
    expect(resolver.queries).toBeGreaterThan(before);
    expect((await t.request('GET', '/v1/dns/zones/delegated.example', { key: a.pat })).body.status).toBe(
      'active',
    );
  });

  it('lets the operator disable and enable a zone; a disabled zone’s records are frozen', async () => {
    const off = await t.operator('POST', '/admin/v1/dns/zones/delegated.example/disable');
    expect(off.status).toBe(200);
    expect(off.body.status).toBe('disabled');
    const write = await t.request('POST', '/v1/dns/zones/delegated.example/records', {
      key: a.pat,
      body: { record_type: 'A', host: 'www', record: '192.0.2.1' },
    });
    expect(write.status).toBe(409);
    expect(write.body.detail.code).toBe('zone_disabled');
    const on = await t.operator('POST', '/admin/v1/dns/zones/delegated.example/enable');
    expect(on.body.status).toBe('pending');
    await t.advance(1);
    expect((await t.request('GET', '/v1/dns/zones/delegated.example', { key: a.pat })).body.status).toBe(
      'active',
    );
    expect((await t.request('POST', '/admin/v1/dns/zones/nope.example/disable', { key: a.pat })).status).toBe(
      401,
    );
    expect((await t.operator('POST', '/admin/v1/dns/zones/nope.example/disable')).status).toBe(404);
  });

  it('deletes a zone with all its records', async () => {
    await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: 'gone.example' } });
    for (const host of ['a', 'b', 'c']) {
      await t.request('POST', '/v1/dns/zones/gone.example/records', {
        key: a.pat,
        body: { record_type: 'A', host, record: '192.0.2.9' },
      });
    }
    expect((await t.request('GET', '/v1/dns/zones/gone.example', { key: a.pat })).body.record_count).toBe(3);
    const del = await t.request('DELETE', '/v1/dns/zones/gone.example', { key: a.pat });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true, message: expect.stringContaining('gone.example') });
    expect((await t.request('GET', '/v1/dns/zones/gone.example', { key: a.pat })).status).toBe(404);
    const rows = await t.kernel.store.db.selectFrom('dns_records').select('name').execute();
    expect(rows.map((r) => String(r.name)).filter((n) => ['a', 'b', 'c'].includes(n))).toEqual([]);
    // The name is free again.
    expect(
      (await t.request('POST', '/v1/dns/zones', { key: b.pat, body: { domain: 'gone.example' } })).status,
    ).toBe(201);
  });

  it('enforces the plan’s zone quota (free: 3)', async () => {
    const c = await t.customer();
    for (const n of [1, 2, 3]) {
      expect(
        (await t.request('POST', '/v1/dns/zones', { key: c.pat, body: { domain: `q${n}.quota.example` } }))
          .status,
      ).toBe(201);
    }
    const r = await t.request('POST', '/v1/dns/zones', { key: c.pat, body: { domain: 'q4.quota.example' } });
    expect(r.status).toBe(403);
    expect(r.body.detail.code).toBe('quota_exceeded');
  });

  it('lists zones in the account services', async () => {
    const r = await t.request('GET', '/v1/account/services', { key: a.pat });
    expect(
      r.body.map((s: { service_type: string; name: string }) => `${s.service_type}:${s.name}`),
    ).toContain('dns:example.com');
  });

  it('takes the dns service key and rate-limits zone creation at 10 per hour', async () => {
    const c = await t.customer();
    await t.kernel.store.db.updateTable('customers').set({ plan: 'pro' }).where('id', '=', c.id).execute();
    const { key } = await t.kernel.identity.createServiceKey(c.id, 'dns', null);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const r = await t.request('POST', '/v1/dns/zones', {
        key,
        body: { domain: `rl${i}.ratelimit.example` },
      });
      statuses.push(r.status);
      if (r.status === 429) {
        expect(r.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
        expect(r.headers['retry-after']).toBeDefined();
      }
    }
    expect(statuses.slice(0, 10).every((s) => s === 201)).toBe(true);
    expect(statuses[10]).toBe(429);
    expect((await t.request('GET', '/v1/dns/zones', { key })).headers['x-ratelimit-limit']).toBe('1000');
  });
});

describe('DNS access', () => {
  it('follows the auth matrix', async () => {
    const fresh = await TestFjord.create();
    try {
      await expectAuthMatrix(fresh, 'DNS');
    } finally {
      await fresh.close();
    }
  });

  it('keeps customers apart', async () => {
    const z = 'example.com';
    const rec = await t.request('POST', `/v1/dns/zones/${z}/records`, {
      key: a.pat,
      body: { record_type: 'TXT', host: 'iso', record: 'owner a' },
    });
    expect(rec.status).toBe(201);
    const id = rec.body.id;
    await expectTenantIsolation(t, { key: a.pat }, { key: b.pat }, [
      { method: 'GET', url: `/v1/dns/zones/${z}` },
      { method: 'GET', url: `/v1/dns/zones/${z}/records` },
      {
        method: 'POST',
        url: `/v1/dns/zones/${z}/records`,
        body: { record_type: 'A', host: 'x', record: '192.0.2.1' },
      },
      { method: 'PUT', url: `/v1/dns/zones/${z}/records/${id}`, body: { record: 'owner b' } },
      { method: 'DELETE', url: `/v1/dns/zones/${z}/records/${id}` },
      {
        method: 'POST',
        url: `/v1/dns/zones/${z}/records/batch`,
        body: { changes: [{ action: 'delete', id }] },
      },
      { method: 'GET', url: `/v1/dns/zones/${z}/export` },
      { method: 'POST', url: `/v1/dns/zones/${z}/import`, body: { zone_file: 'x 60 IN A 192.0.2.1\n' } },
      { method: 'POST', url: `/v1/dns/zones/${z}/dnssec/activate` },
      { method: 'DELETE', url: `/v1/dns/zones/${z}/dnssec` },
      { method: 'GET', url: `/v1/dns/zones/${z}/statistics` },
      { method: 'DELETE', url: `/v1/dns/zones/${z}` },
    ]);
    // B's own record ids in A's zone do not exist either.
    const list = await t.request('GET', '/v1/dns/zones', { key: b.pat });
    expect(list.body.zones.map((x: { name: string }) => x.name)).not.toContain(z);
    const mine = await t.request('GET', `/v1/dns/zones/${z}/records`, { key: a.pat });
    expect(mine.body.records.find((r: { id: string }) => r.id === id).content).toBe('owner a');
  });
});
