// The plan's bandwidth per month on the S3 data plane: downloads from a customer's buckets count
// for that customer; past the plan's bytes, GETs get 403 BandwidthLimitExceeded until a larger
// plan or the next month, while other customers keep downloading.
import { GetObjectCommand, PutObjectCommand, type S3ServiceException } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { S3Server } from '../../src/areas/storage/s3/server.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { s3ClientFor } from '../helpers/s3.js';

let t: TestFjord;
let server: S3Server;
beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_S3_PORT: '0',
    FJORD_LIMITS: JSON.stringify({ 'storage.bandwidth_bytes_per_month': { free: 1000 } }),
  });
  await t.fjord.start(['s3']);
  server = t.fjord.areas.get('storage')!.servers!.find((s) => s.role === 's3') as S3Server;
});
afterAll(() => t.close());

async function bucketOf(c: TestCustomer) {
  const b = await t.request('POST', '/v1/storage/buckets', {
    key: c.pat,
    body: { bucket_name: `bw-${Math.random().toString(36).slice(2, 10)}` },
  });
  expect(b.status, b.text).toBe(201);
  const s3 = s3ClientFor(b.body);
  await s3.send(new PutObjectCommand({ Bucket: b.body.bucket_name, Key: 'f', Body: 'x'.repeat(600) }));
  const get = async () => {
    try {
      const r = await s3.send(new GetObjectCommand({ Bucket: b.body.bucket_name, Key: 'f' }));
      await r.Body!.transformToString();
      return 'ok';
    } catch (err) {
      return (err as S3ServiceException).name;
    }
  };
  return get;
}

it('refuses downloads past the month’s bandwidth, for that customer only, until a larger plan or the next month', async () => {
  const a = await t.customer();
  const b = await t.customer();
  const getA = await bucketOf(a);
  const getB = await bucketOf(b);
  expect(await getA()).toBe('ok');
  expect(await getA()).toBe('ok'); // 1200 bytes: over 1000 once counted
  await server.flushCounters();
  expect(await getA()).toBe('BandwidthLimitExceeded');
  expect(await getB()).toBe('ok');

  await t.operator('PUT', `/admin/v1/customers/${a.id}/plan`, { plan: 'basic' });
  await server.flushCounters();
  expect(await getA()).toBe('ok');

  await t.operator('PUT', `/admin/v1/customers/${a.id}/plan`, { plan: 'free' });
  await server.flushCounters();
  expect(await getA()).toBe('BandwidthLimitExceeded');
  await t.advance(32 * 86_400); // into the next month
  expect(await getA()).toBe('ok');
});
