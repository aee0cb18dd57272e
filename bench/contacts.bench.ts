// How much the contacts area costs on top of the store, for the two things that touch many rows:
// resolving a large group to numbers (what every `POST /v1/sms/send` with `to_groups` does) and a
// text search over the directory (`GET /v1/contacts?q=…`, through the HTTP pipeline).
//
//   npm run bench:contacts [-- --contacts 10000 --iterations 30]
//
// Fjord runs in this process on a fresh temp data dir (SQLite, as embedded). Each figure is set
// against a reference measured in the same run on the same store: a hand-written SQL query that
// fetches the same rows and nothing else (the floor of any implementation on this schema). The
// ratio is reference time / Fjord time, so 1.0 means no overhead. Iterations interleave the two
// sides so that machine drift hits both alike. See bench/README.md.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { Fjord } from '../src/app/fjord.js';
import type { ContactsService } from '../src/areas/contacts/service.js';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/kernel/log.js';

const { values: args } = parseArgs({
  options: {
    contacts: { type: 'string', default: '10000' },
    iterations: { type: 'string', default: '30' },
  },
});
const N = Number(args.contacts);
const ITERATIONS = Number(args.iterations);

const dataDir = mkdtempSync(join(tmpdir(), 'fjord-bench-contacts-'));
const config = loadConfig({
  FJORD_DATA_DIR: dataDir,
  FJORD_DEV_CREDENTIALS: '0',
  FJORD_RATE_LIMITS: JSON.stringify({ contacts: { points: 100_000_000, duration: 60 } }),
});
const fjord = await Fjord.create({ config, log: createLogger('silent') });
try {
  const { identity, store } = fjord.kernel;
  const contacts = fjord.areas.get('contacts')!.service as ContactsService;
  const customer = await identity.createCustomer({
    email: 'bench@example.test',
    customerType: 'business',
    firstName: 'Bench',
    lastName: 'Mark',
  });
  const { key } = await identity.createFullPat(customer.id, 'bench');
  const actor = { kind: 'pat' as const, id: 'bench', scopes: [], expiresAt: null };

  const started = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < N; i++) {
    const c = await contacts.createContact(customer.id, actor, {
      name: `Kunde ${i} ${i % 7 === 0 ? 'Øyvind' : 'Kari'}`,
      phone_number: `+4790${String(i).padStart(6, '0')}`,
      tags: i % 3 === 0 ? ['vip'] : [],
    });
    ids.push(c.id);
  }
  const group = await contacts.groups.create(customer.id, actor, { name: 'Everyone' });
  for (let i = 0; i < ids.length; i += 1000) {
    await contacts.groups.addMembers(customer.id, actor, group.id, ids.slice(i, i + 1000));
  }
  const setupMs = performance.now() - started;

  async function time(fn: () => Promise<number>, expected: number): Promise<number> {
    const t0 = performance.now();
    const rows = await fn();
    const ms = performance.now() - t0;
    if (rows !== expected) throw new Error(`expected ${expected} rows, got ${rows}`);
    return ms;
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

  // 1. A group of N members to numbers.
  const resolveRef = async () =>
    (
      await sql<{ phone_number: string }>`
        SELECT c.phone_number FROM contact_group_members m JOIN contacts c ON c.id = m.contact_id
        WHERE m.group_id = ${group.id} AND c.phone_number IS NOT NULL`.execute(store.db)
    ).rows.length;
  const resolveFjord = async () => (await contacts.resolveRecipients(customer.id, [], [group.id])).length;

  // 2. A search through HTTP (inject) against the same LIKE scan in SQL.
  const expectedHits = Math.ceil(N / 7);
  const searchRef = async () => {
    const rows = await sql<{ id: string; n: number }>`
      SELECT id, (SELECT count(*) FROM contacts WHERE customer_id = ${customer.id} AND search_text LIKE '%øyvind%') AS n
      FROM contacts WHERE customer_id = ${customer.id} AND search_text LIKE '%øyvind%'
      ORDER BY sort_name, id LIMIT 50`.execute(store.db);
    return Number(rows.rows[0]?.n ?? 0);
  };
  const searchFjord = async () => {
    const r = await fjord.http.inject({
      method: 'GET',
      url: '/v1/contacts?q=%C3%98YVIND&per_page=50',
      headers: { 'x-api-key': key },
    });
    if (r.statusCode !== 200) throw new Error(`search answered ${r.statusCode}: ${r.body}`);
    return (JSON.parse(r.body) as { total: number }).total;
  };

  const results: Record<string, { ref: number[]; fjord: number[] }> = {
    [`resolve a ${N}-member group`]: { ref: [], fjord: [] },
    [`search ${N} contacts (HTTP)`]: { ref: [], fjord: [] },
  };
  const [resolveRow, searchRow] = Object.values(results);
  for (let i = 0; i < 3; i++) {
    await resolveRef();
    await resolveFjord();
    await searchRef();
    await searchFjord();
  }
  for (let i = 0; i < ITERATIONS; i++) {
    resolveRow!.ref.push(await time(resolveRef, N));
    resolveRow!.fjord.push(await time(resolveFjord, N));
    searchRow!.ref.push(await time(searchRef, expectedHits));
    searchRow!.fjord.push(await time(searchFjord, expectedHits));
  }

  console.log(
    `contacts bench: ${N} contacts, ${ITERATIONS} iterations, set-up ${(setupMs / 1000).toFixed(1)} s`,
  );
  console.log('| operation | SQL reference (median ms) | Fjord (median ms) | ratio (reference / Fjord) |');
  console.log('| --- | --- | --- | --- |');
  for (const [name, r] of Object.entries(results)) {
    const ref = median(r.ref);
    const fj = median(r.fjord);
    console.log(`| ${name} | ${ref.toFixed(2)} | ${fj.toFixed(2)} | ${(ref / fj).toFixed(2)}× |`);
  }
} finally {
  await fjord.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
