import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';

/**
 * Image uploads (simulated driver): a presigned URL into Fjord's own storage, an archive PUT to
 * it, a deploy naming the upload; refusals for a missing, unfinished, expired or non-archive
 * upload; the upload quota under concurrent creates; another customer's upload is a 404.
 */
let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;

beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_S3_PORT: '0',
    FJORD_RATE_LIMITS: JSON.stringify({ 'container-apps': { points: 10_000, duration: 60 } }),
  });
  await t.fjord.start(['s3']);
  a = await t.customer();
  b = await t.customer();
});
afterAll(() => t.close());

/** A one-file tar archive, as `tar` writes it (the `ustar` magic at offset 257). */
function tarArchive(): Buffer {
  const header = Buffer.alloc(512);
  header.write('manifest.json', 0, 'latin1');
  header.write('0000644\0', 100, 'latin1');
  header.write('0000000\0', 108, 'latin1');
  header.write('0000000\0', 116, 'latin1');
  header.write('00000000002\0', 124, 'latin1');
  header.write('00000000000\0', 136, 'latin1');
  header.write('        ', 148, 'latin1');
  header.write('0', 156, 'latin1');
  header.write('ustar\x0000', 257, 'latin1');
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  const body = Buffer.alloc(512);
  body.write('[]', 0, 'latin1');
  return Buffer.concat([header, body, Buffer.alloc(1024)]);
}

const createUpload = (size: number, key = a.pat) =>
  t.request('POST', '/v1/apps/image-uploads', { key, body: { size_bytes: size } });
const put = (url: string, body: Buffer) => fetch(url, { method: 'PUT', body });

describe('container app image uploads', () => {
  it('deploys an archive uploaded through the presigned URL', async () => {
    const archive = tarArchive();
    const up = await createUpload(archive.length);
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({
      status: 'awaiting_upload',
      upload_method: 'PUT',
      max_bytes: archive.length,
      image: `localhost/fjord-upload/${up.body.id}:latest`,
    });
    // Not uploaded yet: the deploy is refused with what to do.
    const early = await t.request('POST', '/v1/apps', {
      key: a.pat,
      body: { name: 'up', image: { upload_id: up.body.id } },
    });
    expect(early.status).toBe(409);
    expect(early.body.detail.code).toBe('image_not_uploaded');

    expect((await put(up.body.upload_url, archive)).status).toBe(200);
    const got = await t.request('GET', `/v1/apps/image-uploads/${up.body.id}`, { key: a.pat });
    expect(got.body).toMatchObject({ status: 'uploaded', uploaded_at: expect.any(String) });
    expect(got.body.upload_url).toBeUndefined();

    const app = await t.request('POST', '/v1/apps', {
      key: a.pat,
      body: { name: 'up', image: { upload_id: up.body.id } },
    });
    expect(app.status).toBe(201);
    const rev = await t.request('GET', `/v1/apps/${app.body.id}/revisions/1`, { key: a.pat });
    expect(rev.body).toMatchObject({ image: up.body.image, image_upload_id: up.body.id });
    await t.advance(10);
    expect((await t.request('GET', `/v1/apps/${app.body.id}`, { key: a.pat })).body.status).toBe('running');

    // A deploy without an image keeps the upload; one with a registry reference drops it.
    const same = await t.request('POST', `/v1/apps/${app.body.id}/revisions`, {
      key: a.pat,
      body: { env: { A: '1' } },
    });
    expect(same.body).toMatchObject({ image: up.body.image, image_upload_id: up.body.id });
    await t.advance(10);
    const other = await t.request('POST', `/v1/apps/${app.body.id}/revisions`, {
      key: a.pat,
      body: { image: 'quay.io/team/web:2' },
    });
    expect(other.body).toMatchObject({ image: 'quay.io/team/web:2', image_upload_id: null });
    await t.advance(10);

    // In use by a revision: not deleted; once the app is gone, it can be.
    const busy = await t.request('DELETE', `/v1/apps/image-uploads/${up.body.id}`, { key: a.pat });
    expect(busy.status).toBe(409);
    expect(busy.body.detail).toMatchObject({ code: 'image_in_use', revisions: 2 });
    await t.request('DELETE', `/v1/apps/${app.body.id}`, { key: a.pat });
    const gone = await t.request('DELETE', `/v1/apps/image-uploads/${up.body.id}`, { key: a.pat });
    expect(gone.body).toEqual({ deleted: true, id: up.body.id });
    expect((await t.request('GET', `/v1/apps/image-uploads/${up.body.id}`, { key: a.pat })).status).toBe(404);
  });

  it('refuses a file that is no archive, a larger one, an unknown upload and an expired one', async () => {
    const text = Buffer.from('not an image at all, just some text that is long enough'.repeat(20));
    const up = await createUpload(text.length);
    expect((await put(up.body.upload_url, text)).status).toBe(200);
    const bad = await t.request('POST', '/v1/apps', {
      key: a.pat,
      body: { name: 'bad', image: { upload_id: up.body.id } },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.code).toBe('invalid_image_archive');

    const small = await createUpload(10);
    expect((await put(small.body.upload_url, tarArchive())).status).toBe(400);

    const missing = await t.request('POST', '/v1/apps', {
      key: a.pat,
      body: { name: 'bad', image: { upload_id: '00000000-0000-7000-8000-000000000000' } },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.detail.code).toBe('image_upload_not_found');

    const late = await createUpload(2048);
    await t.advance(3601);
    expect((await put(late.body.upload_url, tarArchive())).status).toBe(403);
    const expired = await t.request('GET', `/v1/apps/image-uploads/${late.body.id}`, { key: a.pat });
    expect(expired.body.status).toBe('expired');
    const refused = await t.request('POST', '/v1/apps', {
      key: a.pat,
      body: { name: 'bad', image: { upload_id: late.body.id } },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.detail.message).toContain('expired');

    const huge = await createUpload(10 * 1000 ** 3);
    expect(huge.status).toBe(422);
    expect(huge.body.detail).toMatchObject({ code: 'image_too_large', limit: 1000 ** 3 });
    expect(
      (await t.request('POST', '/v1/apps', { key: a.pat, body: { name: 'image-uploads', image: 'x:1' } }))
        .body.detail.code,
    ).toBe('invalid_name');
  });

  it('never shows another customer’s upload, nor deploys it', async () => {
    const archive = tarArchive();
    const up = await createUpload(archive.length);
    await put(up.body.upload_url, archive);
    expect((await t.request('GET', `/v1/apps/image-uploads/${up.body.id}`, { key: b.pat })).status).toBe(404);
    expect((await t.request('DELETE', `/v1/apps/image-uploads/${up.body.id}`, { key: b.pat })).status).toBe(
      404,
    );
    const theirs = await t.request('POST', '/v1/apps', {
      key: b.pat,
      body: { name: 'steal', image: { upload_id: up.body.id } },
    });
    expect(theirs.status).toBe(404);
  });

  it('holds the upload quota under concurrent creates', async () => {
    const c = await t.customer();
    // The free plan keeps 10 uploads.
    await expectLimitHolds({
      room: 10,
      attempts: 30,
      send: () => createUpload(1024, c.pat),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
    // Uploads whose URL expired unused no longer count.
    await t.advance(3601);
    expect((await createUpload(1024, c.pat)).status).toBe(201);
  });
});
