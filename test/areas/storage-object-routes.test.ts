import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/** The API's object routes (the console's object browser): S3's own handlers, for the owner only. */
let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
let n = 0;
const fresh = () => `objs-${Date.now().toString(36)}-${(n++).toString(36)}`;

beforeAll(async () => {
  t = await TestFjord.create();
  a = await t.customer();
  b = await t.customer();
});
afterAll(() => t.close());

const bucketOf = async (owner: TestCustomer, body: Record<string, unknown> = {}) => {
  const name = fresh();
  const r = await t.request('POST', '/v1/storage/buckets', {
    key: owner.pat,
    body: { bucket_name: name, ...body },
  });
  expect(r.status).toBe(201);
  return name;
};
const put = (owner: TestCustomer, bucket: string, key: string, text: string, type = 'text/plain') =>
  t.request('PUT', `/v1/storage/buckets/${bucket}/object`, {
    key: owner.pat,
    query: { key },
    rawBody: text,
    headers: { 'content-type': type, 'x-amz-meta-origin': 'test' },
  });

describe('objects through the API', () => {
  it('uploads, lists by folder, downloads as an attachment and deletes', async () => {
    const bucket = await bucketOf(a);
    expect((await put(a, bucket, 'docs/readme.txt', 'hello fjord')).status).toBe(200);
    expect((await put(a, bucket, 'docs/deep/x.bin', 'xx', 'application/octet-stream')).status).toBe(200);
    expect((await put(a, bucket, 'top.html', '<script>alert(1)</script>', 'text/html')).status).toBe(200);

    const root = await t.request('GET', `/v1/storage/buckets/${bucket}/objects`, {
      key: a.pat,
      query: { delimiter: '/' },
    });
    expect(root.status).toBe(200);
    expect(root.headers['content-type']).toMatch(/application\/xml/);
    expect(root.text).toContain('<Key>top.html</Key>');
    expect(root.text).toContain('<Prefix>docs/</Prefix>');
    expect(root.text).not.toContain('readme.txt');

    const docs = await t.request('GET', `/v1/storage/buckets/${bucket}/objects`, {
      key: a.pat,
      query: { delimiter: '/', prefix: 'docs/' },
    });
    expect(docs.text).toContain('<Key>docs/readme.txt</Key>');
    expect(docs.text).toContain('<Prefix>docs/deep/</Prefix>');

    const got = await t.request('GET', `/v1/storage/buckets/${bucket}/object`, {
      key: a.pat,
      query: { key: 'docs/readme.txt' },
    });
    expect(got.status).toBe(200);
    expect(got.text).toBe('hello fjord');
    expect(got.headers['x-amz-meta-origin']).toBe('test');
    expect(got.headers['content-disposition']).toBe("attachment; filename*=UTF-8''readme.txt");

    // A stored page is never run as part of Fjord's origin.
    const page = await t.request('GET', `/v1/storage/buckets/${bucket}/object`, {
      key: a.pat,
      query: { key: 'top.html' },
    });
    expect(page.headers['content-security-policy']).toMatch(/sandbox/);
    expect(page.headers['x-content-type-options']).toBe('nosniff');

    const del = await t.request('DELETE', `/v1/storage/buckets/${bucket}/object`, {
      key: a.pat,
      query: { key: 'docs/readme.txt' },
    });
    expect(del.status).toBe(204);
    const gone = await t.request('GET', `/v1/storage/buckets/${bucket}/object`, {
      key: a.pat,
      query: { key: 'docs/readme.txt' },
    });
    expect(gone.status).toBe(404);
    expect(gone.body.detail.code).toBe('object_not_found');
    const bucketRow = await t.request('GET', `/v1/storage/buckets/${bucket}`, { key: a.pat });
    expect(bucketRow.body.object_count ?? bucketRow.body.total_objects).toBe(2);
  });

  it('lists versions and deletes one version in a versioned bucket', async () => {
    const bucket = await bucketOf(a);
    const v = await t.request('PUT', `/v1/storage/buckets/${bucket}/versioning`, {
      key: a.pat,
      body: { status: 'Enabled' },
    });
    expect(v.status).toBeLessThan(300);
    const first = await put(a, bucket, 'k', 'one');
    await put(a, bucket, 'k', 'two');
    const firstVersion = String(first.headers['x-amz-version-id']);
    expect(firstVersion).not.toBe('undefined');
    const versions = await t.request('GET', `/v1/storage/buckets/${bucket}/objects`, {
      key: a.pat,
      query: { versions: 'true' },
    });
    expect(versions.text.match(/<Version>/g)).toHaveLength(2);
    const old = await t.request('GET', `/v1/storage/buckets/${bucket}/object`, {
      key: a.pat,
      query: { key: 'k', version_id: firstVersion },
    });
    expect(old.text).toBe('one');
    const del = await t.request('DELETE', `/v1/storage/buckets/${bucket}/object`, {
      key: a.pat,
      query: { key: 'k', version_id: firstVersion },
    });
    expect(del.status).toBe(204);
    const after = await t.request('GET', `/v1/storage/buckets/${bucket}/objects`, {
      key: a.pat,
      query: { versions: 'true' },
    });
    expect(after.text.match(/<Version>/g)).toHaveLength(1);
  });

  it('uploads in parts (start, parts, complete) and aborts an upload, as the console does above 5 GiB', async () => {
    const bucket = await bucketOf(a);
    const key = 'big/video.bin';
    const started = await t.request('POST', `/v1/storage/buckets/${bucket}/uploads`, {
      key: a.pat,
      query: { key },
      headers: { 'content-type': 'video/mp4' },
    });
    expect(started.status, started.text).toBe(200);
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(started.text)![1]!;
    // All parts but the last are at least 5 MiB.
    const bodies = ['a'.repeat(5 * 1024 * 1024), 'the end'];
    const etags: string[] = [];
    for (const [i, body] of bodies.entries()) {
      const part = await t.request(
        'PUT',
        `/v1/storage/buckets/${bucket}/uploads/${encodeURIComponent(uploadId)}`,
        {
          key: a.pat,
          query: { key, part_number: String(i + 1) },
          rawBody: body,
        },
      );
      expect(part.status, part.text).toBe(200);
      etags.push(String(part.headers['etag']));
    }
    const done = await t.request(
      'POST',
      `/v1/storage/buckets/${bucket}/uploads/${encodeURIComponent(uploadId)}`,
      {
        key: a.pat,
        query: { key },
        headers: { 'content-type': 'application/xml' },
        rawBody: `<CompleteMultipartUpload>${etags
          .map((e, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${e}</ETag></Part>`)
          .join('')}</CompleteMultipartUpload>`,
      },
    );
    expect(done.status, done.text).toBe(200);
    expect(done.text).toContain('<CompleteMultipartUploadResult');
    const got = await t.request('GET', `/v1/storage/buckets/${bucket}/object`, {
      key: a.pat,
      query: { key },
    });
    expect(got.status).toBe(200);
    expect(got.headers['content-type']).toBe('video/mp4');
    expect(got.text.length).toBe(5 * 1024 * 1024 + 'the end'.length);
    expect(got.text.endsWith('athe end')).toBe(true);

    // An aborted upload takes no more parts.
    const second = await t.request('POST', `/v1/storage/buckets/${bucket}/uploads`, {
      key: a.pat,
      query: { key: 'small-parts' },
    });
    const id2 = /<UploadId>([^<]+)<\/UploadId>/.exec(second.text)![1]!;
    const aborted = await t.request(
      'DELETE',
      `/v1/storage/buckets/${bucket}/uploads/${encodeURIComponent(id2)}`,
      {
        key: a.pat,
        query: { key: 'small-parts' },
      },
    );
    expect(aborted.status, aborted.text).toBe(204);
    const late = await t.request('PUT', `/v1/storage/buckets/${bucket}/uploads/${encodeURIComponent(id2)}`, {
      key: a.pat,
      query: { key: 'small-parts', part_number: '1' },
      rawBody: 'x',
    });
    expect(late.status).toBe(404);
    // Another customer cannot start an upload in the bucket: it does not exist for them.
    const theirs = await t.request('POST', `/v1/storage/buckets/${bucket}/uploads`, {
      key: b.pat,
      query: { key },
    });
    expect(theirs.status).toBe(404);
  });

  it("is a 404 for another customer's bucket, even a public one", async () => {
    const bucket = await bucketOf(a, { is_public: true });
    await put(a, bucket, 'secret.txt', 'mine');
    for (const [method, url, query] of [
      ['GET', `/v1/storage/buckets/${bucket}/objects`, {}],
      ['GET', `/v1/storage/buckets/${bucket}/object`, { key: 'secret.txt' }],
      ['DELETE', `/v1/storage/buckets/${bucket}/object`, { key: 'secret.txt' }],
    ] as const) {
      const r = await t.request(method, url, { key: b.pat, query });
      expect(r.status).toBe(404);
      expect(r.body.detail.code).toBe('bucket_not_found');
    }
    const r = await put(b, bucket, 'secret.txt', 'theirs');
    expect(r.status).toBe(404);
    const still = await t.request('GET', `/v1/storage/buckets/${bucket}/object`, {
      key: a.pat,
      query: { key: 'secret.txt' },
    });
    expect(still.text).toBe('mine');
  });

  it('lets a read-only PAT list and download but not write', async () => {
    const bucket = await bucketOf(a);
    await put(a, bucket, 'r.txt', 'read me');
    const { key: readOnly } = await t.kernel.identity.createPat(a.id, ['storage:read'], 'ro');
    const list = await t.request('GET', `/v1/storage/buckets/${bucket}/objects`, { key: readOnly });
    expect(list.status).toBe(200);
    const write = await t.request('PUT', `/v1/storage/buckets/${bucket}/object`, {
      key: readOnly,
      query: { key: 'w.txt' },
      rawBody: 'no',
    });
    expect(write.status).toBe(403);
  });

  it('refuses what S3 refuses, in the API’s error shape', async () => {
    const bucket = await bucketOf(a, { object_lock_enabled: true });
    const put1 = await t.request('PUT', `/v1/storage/buckets/${bucket}/object`, {
      key: a.pat,
      query: { key: 'locked' },
      rawBody: 'x',
      headers: {
        'x-amz-object-lock-mode': 'COMPLIANCE',
        'x-amz-object-lock-retain-until-date': new Date(Date.now() + 86_400_000).toISOString(),
      },
    });
    expect(put1.status).toBe(200);
    const version = String(put1.headers['x-amz-version-id']);
    const del = await t.request('DELETE', `/v1/storage/buckets/${bucket}/object`, {
      key: a.pat,
      query: { key: 'locked', version_id: version },
    });
    expect(del.status).toBe(403);
    expect(del.body.detail.code).toBe('object_request_refused');
    expect(del.body.detail.message).toMatch(/AccessDenied/);
  });
});
