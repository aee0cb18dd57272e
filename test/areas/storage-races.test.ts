import { afterAll, beforeAll, describe, it } from 'vitest';
import { TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';

/**
 * Storage limits under requests that arrive together: buckets per customer, keys per bucket and
 * account keys and KMS keys per customer. Before the unit of work, 110 concurrent key creates made 111 keys
 * against a limit of 100 on PostgreSQL.
 */
let t: TestFjord;
beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_LIMITS: JSON.stringify({
      'storage.buckets': 4,
      'storage.keys_per_bucket': 6,
      'storage.account_keys': 5,
      'storage.kms_keys': 3,
    }),
  });
});
afterAll(() => t.close());

const fresh = (() => {
  let n = 0;
  return (stem: string) => `${stem}-${Date.now().toString(36)}-${(n++).toString(36)}`;
})();

describe('storage limits under concurrency', () => {
  it('50 bucket creates at once make exactly the limit', async () => {
    const c = await t.customer();
    await expectLimitHolds({
      room: 4,
      send: () =>
        t.request('POST', '/v1/storage/buckets', { key: c.pat, body: { bucket_name: fresh('race') } }),
      refusal: { status: 409, code: 'bucket_limit_reached' },
    });
  });

  it('50 key creates at once fill a bucket to exactly its limit (its default key included)', async () => {
    const c = await t.customer();
    const name = fresh('keys');
    await t.request('POST', '/v1/storage/buckets', { key: c.pat, body: { bucket_name: name } });
    await expectLimitHolds({
      room: 5,
      send: (i) =>
        t.request('POST', `/v1/storage/buckets/${name}/keys`, { key: c.pat, body: { name: `k${i}` } }),
      refusal: { status: 409, code: 'key_limit_reached' },
    });
  });

  it('50 account-key creates at once make exactly the limit', async () => {
    const c = await t.customer();
    await expectLimitHolds({
      room: 5,
      send: (i) =>
        t.request('POST', '/v1/storage/keys', {
          key: c.pat,
          body: { name: `a${i}`, actions: ['s3:ListAllMyBuckets'] },
        }),
      refusal: { status: 409, code: 'key_limit_reached' },
    });
  });

  it('50 KMS key creates at once make exactly the limit', async () => {
    const c = await t.customer();
    await expectLimitHolds({
      room: 3,
      send: () => t.request('POST', '/v1/storage/kms-keys', { key: c.pat, body: {} }),
      refusal: { status: 409, code: 'kms_key_limit_reached' },
    });
  });
});
