import { DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TestFjord } from '../helpers/fjord.js';

/** The plan's storage (`storage.bytes`) holds on the S3 data plane: a write that would pass it is refused. */
let t: TestFjord;
beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_S3_PORT: '0',
    FJORD_LIMITS: JSON.stringify({ 'storage.bytes': { free: 1000 } }),
  });
  await t.fjord.start(['s3']);
});
afterAll(() => t.close());

it('refuses a write past the plan’s bytes with QuotaExceeded, and takes it again once room is made or the plan changes', async () => {
  const c = await t.customer();
  const name = `quota-${Date.now().toString(36)}`;
  const b = await t.request('POST', '/v1/storage/buckets', { key: c.pat, body: { bucket_name: name } });
  const s3 = new S3Client({
    endpoint: b.body.endpoint,
    region: 'eu-north-1',
    forcePathStyle: true,
    credentials: { accessKeyId: b.body.access_key, secretAccessKey: b.body.secret_key },
    maxAttempts: 1,
  });
  const put = (key: string, bytes: number) =>
    s3.send(new PutObjectCommand({ Bucket: name, Key: key, Body: 'x'.repeat(bytes) })).then(
      () => 'ok',
      (e: { name?: string; $metadata?: { httpStatusCode?: number } }) =>
        `${e.$metadata?.httpStatusCode} ${e.name}`,
    );
  expect(await put('a', 600)).toBe('ok');
  expect(await put('b', 600)).toBe('403 QuotaExceeded');
  await s3.send(new DeleteObjectCommand({ Bucket: name, Key: 'a' }));
  expect(await put('b', 600)).toBe('ok');
  expect(await put('c', 600)).toBe('403 QuotaExceeded');
  await t.operator('PUT', `/admin/v1/customers/${c.id}/plan`, { plan: 'basic' });
  expect(await put('c', 600)).toBe('ok');
});
