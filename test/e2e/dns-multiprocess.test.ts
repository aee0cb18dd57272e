// Scaled out on PostgreSQL: one Fjord takes the API calls, another runs only the `dns` role on
// the same store. Changes reach the second one's answers through LISTEN/NOTIFY.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fjord } from '../../src/app/fjord.js';
import type { DnsServer } from '../../src/areas/dns/server/index.js';
import { loadConfig } from '../../src/config/config.js';
import { OPERATOR_TOKEN, type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { TEST_STORE } from '../helpers/store.js';
import { dig } from './dns-fixtures.js';

const Z = 'scaled-out.example';

describe.skipIf(TEST_STORE !== 'postgres')('two processes on one PostgreSQL store', () => {
  let api: TestFjord;
  let dnsOnly: Fjord;
  let a: TestCustomer;
  let port: number;

  async function eventually(name: string, type: string, check: (out: string) => boolean): Promise<string> {
    let out = '';
    for (let i = 0; i < 100; i++) {
      out = await dig(port, name, type);
      if (check(out)) return out;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no matching answer for ${name} ${type}:\n${out}`);
  }

  beforeAll(async () => {
    api = await TestFjord.create();
    const { store, dataDir } = api.kernel.config;
    if (store.kind !== 'postgres') throw new Error('expected a PostgreSQL store');
    dnsOnly = await Fjord.create({
      config: loadConfig({
        FJORD_DATA_DIR: dataDir, // the same data key, for the zones' signing keys
        FJORD_DATABASE_URL: store.url,
        FJORD_DNS_PORT: '0',
        FJORD_DNS_RRL_RATE: '0',
        FJORD_DEV_CREDENTIALS: '0',
        FJORD_OPERATOR_TOKEN: OPERATOR_TOKEN,
        FJORD_ROLES: 'dns',
      }),
      log: pino({ level: 'silent' }),
    });
    await dnsOnly.start(['dns']);
    port = (dnsOnly.areas.get('dns')!.servers!.find((s) => s.role === 'dns') as DnsServer).port()!;
    a = await api.customer();
    expect((await api.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: Z } })).status).toBe(
      201,
    );
  });

  afterAll(async () => {
    await dnsOnly?.stop();
    await api?.close();
  });

  it('serves a zone created in the other process, and follows its changes', async () => {
    await eventually(Z, 'SOA', (out) => /status: NOERROR/.test(out));
    const url = `/v1/dns/zones/${Z}/records`;
    const r = await api.request('POST', url, {
      key: a.pat,
      body: { record_type: 'A', host: 'www', record: '192.0.2.7', ttl: 300 },
    });
    expect(r.status, r.text).toBe(201);
    await eventually(`www.${Z}`, 'A', (out) => /192\.0\.2\.7/.test(out));
    await api.request('PUT', `${url}/${r.body.id}`, { key: a.pat, body: { record: '192.0.2.8' } });
    await eventually(`www.${Z}`, 'A', (out) => /192\.0\.2\.8/.test(out));
    const on = await api.request('POST', `/v1/dns/zones/${Z}/dnssec/activate`, { key: a.pat });
    expect(on.status).toBe(200);
    await eventually(Z, 'DNSKEY', (out) => /DNSKEY\s+257 3 13/.test(out));
    expect(await dig(port, `www.${Z}`, 'A', '+dnssec')).toMatch(/RRSIG\s+A 13 3 300/);
    expect((await api.request('DELETE', `/v1/dns/zones/${Z}`, { key: a.pat })).status).toBe(200);
    await eventually(Z, 'SOA', (out) => /status: REFUSED/.test(out));
  });
});
