import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { StorageChangeNotices } from '../../src/areas/storage/change-notices.js';
import { openStore, type Store } from '../../src/kernel/store/store.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { TEST_STORE } from '../helpers/store.js';

/**
 * Bucket and key changes reach every process on the store: here a second store connection
 * (another process, as far as PostgreSQL can tell) hears what the first one's API did.
 */
let t: TestFjord;
let a: TestCustomer;
let other: Store | null = null;
let notices: StorageChangeNotices;
const buckets: string[] = [];
const keys: string[] = [];
// How long a notice may take to arrive: across LISTEN/NOTIFY on PostgreSQL, longer than
// vi.waitFor's own 1 s on a loaded machine.
const NOTICE = { timeout: 10_000 };

beforeAll(async () => {
  t = await TestFjord.create();
  a = await t.customer();
  const config = t.kernel.config;
  other = config.store.kind === 'postgres' ? await openStore(config) : null;
  notices = new StorageChangeNotices(other ?? t.kernel.store);
  notices.onBucketChanged((name) => buckets.push(name));
  notices.onKeyChanged((id) => keys.push(id));
  // The LISTEN connection is up before anything is sent.
  await (other ?? t.kernel.store).listening();
});
afterAll(async () => {
  notices.close();
  await other?.close();
  await t.close();
});

describe('storage change notices', () => {
  it('tell other processes which bucket and which key changed', async () => {
    const name = `notice-${Date.now().toString(36)}`;
    const made = await t.request('POST', '/v1/storage/buckets', { key: a.pat, body: { bucket_name: name } });
    await vi.waitFor(() => expect(buckets).toContain(name), NOTICE);
    const key = await t.request('POST', `/v1/storage/buckets/${name}/keys`, {
      key: a.pat,
      body: { name: 'k' },
    });
    await t.request('DELETE', `/v1/storage/buckets/${name}/keys/${key.body.id}`, { key: a.pat });
    await vi.waitFor(() => expect(keys).toContain(key.body.access_key), NOTICE);
    buckets.length = 0;
    await t.request('PATCH', `/v1/storage/buckets/${name}/visibility`, {
      key: a.pat,
      body: { is_public: true },
    });
    await vi.waitFor(() => expect(buckets).toContain(name), NOTICE);
    await t.request('DELETE', `/v1/storage/buckets/${name}`, { key: a.pat });
    await vi.waitFor(() => expect(keys).toContain(made.body.access_key), NOTICE);
  });

  it('tell listeners to drop everything after an emulator reset', async () => {
    buckets.length = 0;
    const local: string[] = [];
    (
      t.fjord.areas.get('storage')!.service as {
        directory: { onBucketChanged(l: (n: string) => void): void };
      }
    ).directory.onBucketChanged((n) => local.push(n));
    expect((await t.operator('POST', '/admin/v1/reset')).status).toBe(200);
    expect(local).toContain('');
  });

  it.skipIf(TEST_STORE !== 'postgres')(
    'tell listeners to drop everything when notices may have been lost',
    async () => {
      keys.length = 0;
      const killed = await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE datname = current_database() AND query LIKE 'LISTEN%fjord_storage%' AND pid <> pg_backend_pid()`.execute(
        t.kernel.store.db,
      );
      expect(killed.rows.length).toBeGreaterThan(0);
      await vi.waitFor(() => expect(keys).toContain(''), NOTICE);
    },
  );
});
