import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestFjord } from '../helpers/fjord.js';
import { connectAs, type SharedEngines, startSharedEngines } from './databases-engines.js';
import { createDb, creds, dbCustomer } from './databases-fixtures.js';

let engines: SharedEngines;
let t: TestFjord;
beforeAll(async () => { engines = await startSharedEngines(); t = await TestFjord.create(engines.env); }, 120_000);
afterAll(async () => { await t?.close(); await engines?.stop(); });
const show = (label: string, r: { status: number; text: string }) => console.log(`### ${label}: ${r.status} ${r.text.slice(0, 300)}`);
const tryc = async (label: string, p: Promise<unknown>) => { try { await p; console.log(`### ${label}: OK`); } catch (e) { console.log(`### ${label}: FAIL ${(e as Error).message}`); } };

describe('real', () => {
  it('pg log + policy race', async () => {
    const c = await dbCustomer(t);
    const rs = await Promise.all([1, 2].map(() => t.request('POST', '/v1/databases', { key: c.key, body: { db_type: 'postgresql', db_name: 'logme' } })));
    const { readFileSync } = await import('node:fs');
    const { dirname, join } = await import('node:path');
    const log = readFileSync(join(dirname(engines.env.FJORD_POSTGRES_HBA_FILE!), 'server.log'), 'utf8');
    for (const r of rs) console.log('### status', r.status, 'pw', r.body.password ?? null);
    const m = log.split('\n').filter((l) => /PASSWORD/i.test(l));
    console.log('### server.log password lines:', JSON.stringify(m.map((l) => l.replace(/PASSWORD '([^']{6})[^']*'/, "PASSWORD '$1…'"))));
    const d = rs.find((r) => r.status === 201)!.body;
    const base = `/v1/databases/postgresql/${d.technical_name}`;
    const pr = await Promise.all([1, 2, 3, 4].map((i) => t.request('PUT', `${base}/backup-policy`, { key: c.key, body: { enabled: true, frequency: 'daily', hour_utc: i } })));
    console.log('### concurrent policy PUT', pr.map((r) => `${r.status} ${r.status >= 500 ? r.text.slice(0, 200) : ''}`).join(' | '));
    const sr = await Promise.all([1, 2].map(() => t.request('POST', `${base}/restore`, { key: c.key, body: { snapshot_id: 'x' } })));
    // concurrent snapshot + delete
    const [snap, del] = await Promise.all([
      t.request('POST', `${base}/snapshots`, { key: c.key }),
      (async () => { await new Promise((r) => setTimeout(r, 20)); return t.request('DELETE', base, { key: c.key }); })(),
    ]);
    console.log('### snapshot vs delete', snap.status, snap.text.slice(0, 200), '|', del.status, del.text.slice(0, 200));
  });
});
