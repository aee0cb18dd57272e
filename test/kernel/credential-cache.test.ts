import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialCache, STORE_CHECK_MS } from '../../src/kernel/auth/credential-cache.js';
import type { ApiKeyWithCustomer } from '../../src/kernel/auth/identity-repo.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { TEST_STORE } from '../helpers/store.js';

// The credential cache exists only on SQLite; on PostgreSQL every request reads the store.
describe.skipIf(TEST_STORE !== 'sqlite')('credentials cached in memory stay exact', () => {
  let t: TestFjord;
  let c: TestCustomer;
  let other: SQLite.Database;

  beforeAll(async () => {
    t = await TestFjord.create();
    c = await t.customer();
    // A second connection to the same file, as the admin CLI or another process would open.
    other = new SQLite(join(t.kernel.config.dataDir, 'fjord.sqlite'));
  });
  afterAll(async () => {
    other.close();
    await t.close();
  });
  /**
   * A write by another process, then as long as the cache may take to see it (STORE_CHECK_MS on
   * a monotonic clock, the documented bound): every request after that must see it.
   */
  const elsewhere = async (sql: string, ...params: unknown[]) => {
    other.prepare(sql).run(...params);
    const committed = performance.now();
    while (performance.now() - committed <= STORE_CHECK_MS) await new Promise((r) => setTimeout(r, 1));
  };

  it('sees a revocation made by another process within the bound', async () => {
    const { key, view } = await t.kernel.identity.createPat(c.id, ['regions:read'], null);
    expect((await t.request('GET', '/v1/regions', { key })).status).toBe(200);
    expect((await t.request('GET', '/v1/regions', { key })).status).toBe(200);
    await elsewhere('UPDATE api_keys SET is_active = 0, revoked_at = 1 WHERE id = ?', view.id);
    expect((await t.request('GET', '/v1/regions', { key })).status).toBe(401);
  });

  it('refuses a key revoked through the API on the very next request, in the same turn too', async () => {
    const { key, view } = await t.kernel.identity.createPat(c.id, ['regions:read'], null);
    // Used twice: the second answer comes from the cache, by the secret itself.
    expect((await t.request('GET', '/v1/regions', { key })).status).toBe(200);
    expect((await t.request('GET', '/v1/regions', { key })).status).toBe(200);
    const revoked = await t.request('DELETE', `/v1/account/api-keys/${view.id}`, { key: c.pat });
    expect(revoked.status).toBe(200);
    // No turn of the event loop in between: this process's own write clears what it cached.
    expect(t.kernel.identity.authenticateKeyNow(key)).toBeUndefined();
    expect((await t.request('GET', '/v1/regions', { key })).status).toBe(401);
    expect((await t.request('GET', '/v1/regions', { key })).status).toBe(401);
  });

  it('does not answer for a secret it has not seen, even one differing by a character', async () => {
    const { key } = await t.kernel.identity.createPat(c.id, ['regions:read'], null);
    expect((await t.request('GET', '/v1/regions', { key })).status).toBe(200);
    const other = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
    expect((await t.request('GET', '/v1/regions', { key: other })).status).toBe(401);
  });

  it('sees a suspension made by another process within the bound', async () => {
    expect((await t.request('GET', '/v1/account/profile', { key: c.pat })).status).toBe(200);
    await elsewhere("UPDATE customers SET status = 'suspended' WHERE id = ?", c.id);
    expect((await t.request('GET', '/v1/account/profile', { key: c.pat })).status).toBe(401);
    await elsewhere("UPDATE customers SET status = 'active' WHERE id = ?", c.id);
    expect((await t.request('GET', '/v1/account/profile', { key: c.pat })).status).toBe(200);
  });

  it('sees a profile change made by another process', async () => {
    await elsewhere("UPDATE customers SET company = 'Fjordline AS' WHERE id = ?", c.id);
    const r = await t.request('GET', '/v1/account/profile', { key: c.pat });
    expect(r.body.company).toBe('Fjordline AS');
  });

  it('forgets everything on an emulator reset', async () => {
    expect((await t.request('GET', '/v1/account/profile', { key: c.pat })).status).toBe(200);
    await t.operator('POST', '/admin/v1/reset');
    expect((await t.request('GET', '/v1/account/profile', { key: c.pat })).status).toBe(401);
  });
});

describe('the credential cache asks the store at most once per STORE_CHECK_MS', () => {
  const row = { id: 'k1' } as ApiKeyWithCustomer;

  it('drops what it holds on the first check after the bound once the store changed', () => {
    let now = 1_000;
    let version = 1;
    let asked = 0;
    const cache = new CredentialCache(
      () => {
        asked++;
        return version;
      },
      10,
      () => now,
    );
    cache.putKey('h', row, cache.check());
    expect(asked).toBe(1);
    version = 2; // another connection commits
    now += STORE_CHECK_MS / 2;
    // Within the bound the store is not asked again: the row is still answered.
    expect(cache.check()).toBe(cache.check());
    expect(asked).toBe(1);
    expect(cache.key('h')).toBe(row);
    now += STORE_CHECK_MS / 2; // the bound reached: asked, and the change is seen
    cache.check();
    expect(asked).toBe(2);
    expect(cache.key('h')).toBeUndefined();
  });

  it('keeps what it holds when the store did not change, and asks again after each bound', () => {
    let now = 0;
    let asked = 0;
    const cache = new CredentialCache(
      () => {
        asked++;
        return 7;
      },
      10,
      () => now,
    );
    cache.putKey('h', row, cache.check());
    for (let i = 0; i < 5; i++) {
      now += STORE_CHECK_MS;
      cache.check();
    }
    expect(asked).toBe(6);
    expect(cache.key('h')).toBe(row);
  });

  it('refuses a row looked up before a clear (a write raced the lookup)', () => {
    const cache = new CredentialCache(
      () => 1,
      10,
      () => 0,
    );
    const generation = cache.check();
    cache.clear();
    cache.putKey('h', row, generation);
    expect(cache.key('h')).toBeUndefined();
  });
});
