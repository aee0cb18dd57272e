import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import type { StorageTables } from '../../src/areas/storage/migrations.js';
import type { TestCustomer, TestFjord } from '../helpers/fjord.js';
import { storageS3Fixture } from './storage-s3-fixture.js';

/**
 * Scheduled deletion of SSE-KMS keys (AWS KMS's ScheduleKeyDeletion / CancelKeyDeletion): the
 * waiting period, what S3 answers meanwhile, cancelling, destruction on the clock, and writes
 * racing the scheduling.
 */
const f = storageS3Fixture('kmsdel');
const { bucketOf, newKey } = f;
let t: TestFjord;
let a: TestCustomer;
const DAY = 86_400;

beforeAll(() => {
  t = f.t;
  a = f.a;
});

const keyUrl = (id: string, verb = '') => `/v1/storage/kms-keys/${id}${verb ? `/${verb}` : ''}`;
const schedule = (c: TestCustomer, id: string, body?: Record<string, unknown>) =>
  t.request('POST', keyUrl(id, 'schedule-deletion'), { key: c.pat, ...(body ? { body } : {}) });
const errorName = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'ok',
    (e: { name?: string }) => e.name ?? String(e),
  );
const kms = (keyId: string) => ({ ServerSideEncryption: 'aws:kms' as const, SSEKMSKeyId: keyId });

describe('scheduling a KMS key’s deletion', () => {
  it('puts the key in PendingDeletion for 7-30 days; cancelling brings it back Disabled', async () => {
    const c = await t.customer();
    const k = await newKey(c, 'alias/to-go');
    const before = t.kernel.clock.nowMs();
    for (const days of [6, 31, 7.5])
      expect((await schedule(c, k.key_id, { pending_window_days: days })).status, `${days}`).toBe(422);
    const r = await schedule(c, encodeURIComponent('alias/to-go'), { pending_window_days: 7 });
    expect(r.status).toBe(200);
    expect(r.body.key_state).toBe('PendingDeletion');
    const due = Date.parse(r.body.deletion_date);
    expect(due - before).toBeGreaterThanOrEqual(7 * DAY * 1000);
    expect(due - t.kernel.clock.nowMs()).toBeLessThanOrEqual(7 * DAY * 1000);
    expect((await t.request('GET', keyUrl(k.key_id), { key: c.pat })).body.deletion_date).toBe(
      r.body.deletion_date,
    );
    // A key pending deletion is only taken back by cancelling.
    for (const verb of ['enable', 'disable', 'rotate', 'schedule-deletion']) {
      const refused = await t.request('POST', keyUrl(k.key_id, verb), { key: c.pat });
      expect(refused.status, verb).toBe(409);
      expect(refused.body.detail.code).toBe('kms_key_invalid_state');
    }
    const back = await t.request('POST', keyUrl(k.key_id, 'cancel-deletion'), { key: c.pat });
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ key_state: 'Disabled', deletion_date: null });
    const again = await t.request('POST', keyUrl(k.key_id, 'cancel-deletion'), { key: c.pat });
    expect(again.status).toBe(409);
    expect(again.body.detail.code).toBe('kms_key_invalid_state');
    // The default waiting period is 30 days.
    const thirty = await schedule(c, k.key_id);
    expect(Date.parse(thirty.body.deletion_date) - t.kernel.clock.nowMs()).toBeGreaterThan(29 * DAY * 1000);
    const { entries } = await t.kernel.audit.list(c.id, { resourceId: k.key_id });
    expect(entries.map((e) => e.action)).toEqual(
      expect.arrayContaining(['storage.kms_key.deletion_scheduled', 'storage.kms_key.deletion_cancelled']),
    );
  });

  it('refuses the default key (alias/aws/s3) and another customer’s key', async () => {
    const c = await t.customer();
    const { name, s3 } = await bucketOf(c);
    await s3.send(
      new PutObjectCommand({ Bucket: name, Key: 'd', Body: 'x', ServerSideEncryption: 'aws:kms' }),
    );
    const keys = await t.request('GET', '/v1/storage/kms-keys', { key: c.pat });
    const def = keys.body.find((x: { is_default: boolean }) => x.is_default);
    const refused = await schedule(c, def.key_id);
    expect(refused.status).toBe(409);
    expect(refused.body.detail.code).toBe('kms_key_not_deletable');
    const mine = await newKey(c);
    expect((await schedule(a, mine.key_id)).status).toBe(404);
    expect((await t.request('POST', keyUrl(mine.key_id, 'cancel-deletion'), { key: a.pat })).status).toBe(
      404,
    );
  });
});

describe('S3 and a key pending deletion', () => {
  it('refuses reads and writes with KMS.KMSInvalidStateException until the deletion is cancelled', async () => {
    const { name, s3 } = await bucketOf(a);
    const k = await newKey(a);
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'o', Body: 'SEALED', ...kms(k.key_id) }));
    const up = await s3.send(new CreateMultipartUploadCommand({ Bucket: name, Key: 'mp', ...kms(k.key_id) }));
    const part = await s3.send(
      new UploadPartCommand({ Bucket: name, Key: 'mp', UploadId: up.UploadId, PartNumber: 1, Body: 'p1' }),
    );
    expect((await schedule(a, k.key_id, { pending_window_days: 7 })).status).toBe(200);
    const invalid = { name: 'KMS.KMSInvalidStateException', $metadata: { httpStatusCode: 400 } };
    await expect(s3.send(new GetObjectCommand({ Bucket: name, Key: 'o' }))).rejects.toMatchObject(invalid);
    await expect(
      s3.send(new PutObjectCommand({ Bucket: name, Key: 'new', Body: 'x', ...kms(k.arn) })),
    ).rejects.toMatchObject(invalid);
    await expect(
      s3.send(
        new UploadPartCommand({ Bucket: name, Key: 'mp', UploadId: up.UploadId, PartNumber: 2, Body: 'p2' }),
      ),
    ).rejects.toMatchObject(invalid);
    const complete = () =>
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: name,
          Key: 'mp',
          UploadId: up.UploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
        }),
      );
    await expect(complete()).rejects.toMatchObject(invalid);
    // HEAD answers without the key, as S3's does.
    expect((await s3.send(new HeadObjectCommand({ Bucket: name, Key: 'o' }))).SSEKMSKeyId).toBe(k.arn);

    await t.request('POST', keyUrl(k.key_id, 'cancel-deletion'), { key: a.pat });
    await expect(s3.send(new GetObjectCommand({ Bucket: name, Key: 'o' }))).rejects.toMatchObject({
      name: 'KMS.DisabledException',
    });
    await t.request('POST', keyUrl(k.key_id, 'enable'), { key: a.pat });
    const got = await s3.send(new GetObjectCommand({ Bucket: name, Key: 'o' }));
    expect(await got.Body!.transformToString()).toBe('SEALED');
    await complete();
    const mp = await s3.send(new GetObjectCommand({ Bucket: name, Key: 'mp' }));
    expect(await mp.Body!.transformToString()).toBe('p1');
  });

  it('destroys the key when the waiting period ends on the clock; its objects stay unreadable', async () => {
    const c = await t.customer();
    const { name, s3 } = await bucketOf(c);
    const k = await newKey(c, 'alias/short-lived');
    const kept = await newKey(c);
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'gone', Body: 'LOST', ...kms(k.key_id) }));
    await s3.send(new PutObjectCommand({ Bucket: name, Key: 'kept', Body: 'KEPT', ...kms(kept.key_id) }));
    await schedule(c, k.key_id, { pending_window_days: 7 });
    // A deletion scheduled and cancelled leaves a job that must not destroy the key later.
    await schedule(c, kept.key_id, { pending_window_days: 7 });
    await t.request('POST', keyUrl(kept.key_id, 'cancel-deletion'), { key: c.pat });
    await t.request('POST', keyUrl(kept.key_id, 'enable'), { key: c.pat });

    await t.advance(7 * DAY - 60);
    expect((await t.request('GET', keyUrl(k.key_id), { key: c.pat })).body.key_state).toBe('PendingDeletion');
    await t.advance(120);
    expect((await t.request('GET', keyUrl(k.key_id), { key: c.pat })).status).toBe(404);
    const listed = await t.request('GET', '/v1/storage/kms-keys', { key: c.pat });
    expect(listed.body.map((x: { key_id: string }) => x.key_id)).toEqual([kept.key_id]);
    const cancel = await t.request('POST', keyUrl(k.key_id, 'cancel-deletion'), { key: c.pat });
    expect(cancel.status).toBe(404);
    await expect(s3.send(new GetObjectCommand({ Bucket: name, Key: 'gone' }))).rejects.toMatchObject({
      name: 'KMS.KMSInvalidStateException',
      $metadata: { httpStatusCode: 400 },
    });
    await expect(
      s3.send(new PutObjectCommand({ Bucket: name, Key: 'more', Body: 'x', ...kms(k.key_id) })),
    ).rejects.toMatchObject({ name: 'KMS.NotFoundException' });
    const still = await s3.send(new GetObjectCommand({ Bucket: name, Key: 'kept' }));
    expect(await still.Body!.transformToString()).toBe('KEPT');

    // The material is gone from the store; the alias is free again.
    const row = await t.kernel.store
      .typed<StorageTables>()
      .selectFrom('storage_kms_keys')
      .selectAll()
      .where('id', '=', k.key_id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ state: 'Deleted', versions: '[]', alias: null });
    await newKey(c, 'alias/short-lived');
    const { entries } = await t.kernel.audit.list(c.id, { resourceId: k.key_id });
    expect(entries.map((e) => e.action)).toContain('storage.kms_key.deleted');
  });

  it('never acknowledges a write under a key after its deletion was scheduled (race)', async () => {
    for (let round = 0; round < 3; round++) {
      const c = await t.customer();
      const { name, s3 } = await bucketOf(c);
      const k = await newKey(c);
      // Writers put under the key, one write after another, while the deletion is scheduled.
      const writes: { key: string; body: string; afterSchedule: boolean; result: string }[] = [];
      let scheduled = false;
      let acknowledged = 0;
      const writer = async (w: number) => {
        let refused = 0;
        for (let i = 0; i < 60 && refused < 3; i++) {
          const key = `w${w}-${i}`;
          const body = `round${round}-${key}`;
          const afterSchedule = scheduled;
          const result = await errorName(
            s3.send(new PutObjectCommand({ Bucket: name, Key: key, Body: body, ...kms(k.key_id) })),
          );
          if (result === 'ok') acknowledged++;
          else refused++;
          writes.push({ key, body, afterSchedule, result });
        }
      };
      const scheduler = async () => {
        while (acknowledged < 6) await new Promise((r) => setTimeout(r, 1));
        const r = await schedule(c, k.key_id, { pending_window_days: 7 });
        expect(r.status).toBe(200);
        scheduled = true;
      };
      await Promise.all([writer(0), writer(1), writer(2), writer(3), scheduler()]);
      expect(writes.some((x) => x.result === 'ok')).toBe(true);
      for (const x of writes) expect(['ok', 'KMS.KMSInvalidStateException']).toContain(x.result);
      // Every write that started once the scheduling had answered was refused...
      expect(writes.filter((x) => x.afterSchedule && x.result === 'ok')).toEqual([]);
      // ...and once one writer was refused, it was never acknowledged again.
      for (let w = 0; w < 4; w++) {
        const mine = writes.filter((x) => x.key.startsWith(`w${w}-`)).map((x) => x.result);
        const first = mine.indexOf('KMS.KMSInvalidStateException');
        expect(first, `writer ${w}`).toBeGreaterThanOrEqual(0);
        expect(
          mine.slice(first).every((r) => r !== 'ok'),
          `writer ${w}: ${mine.join(',')}`,
        ).toBe(true);
      }
      // What was acknowledged is whole and sealed under the key; what was refused was not stored.
      await t.request('POST', keyUrl(k.key_id, 'cancel-deletion'), { key: c.pat });
      await t.request('POST', keyUrl(k.key_id, 'enable'), { key: c.pat });
      for (const x of writes) {
        if (x.result !== 'ok') {
          const head = await errorName(s3.send(new HeadObjectCommand({ Bucket: name, Key: x.key })));
          expect(head, `round ${round} ${x.key}`).toBe('NotFound');
          continue;
        }
        const obj = await s3.send(new GetObjectCommand({ Bucket: name, Key: x.key }));
        expect(obj.SSEKMSKeyId).toBe(k.arn);
        expect(await obj.Body!.transformToString()).toBe(x.body);
      }
    }
  });
});
