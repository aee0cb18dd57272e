import { createHash } from 'node:crypto';
import http from 'node:http';
import { Readable } from 'node:stream';
import {
  GetObjectCommand,
  ListBucketsCommand,
  PutBucketCorsCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest, UNSIGNED_PAYLOAD } from './sigv4.js';
import { type Harness, startHarness } from './testing/harness.js';

let h: Harness;
const client = (id: string, secret = `secret-${id}`, region = 'eu-north-1') =>
  new S3Client({
    endpoint: h.endpoint,
    region,
    forcePathStyle: true,
    credentials: { accessKeyId: id, secretAccessKey: secret },
  });

beforeAll(async () => {
  h = await startHarness({ FJORD_S3_BASE_DOMAIN: 's3.test' });
  h.directory.addBucket({ name: 'private-b', customerId: 'c1' });
  h.directory.addBucket({ name: 'public-b', customerId: 'c1', isPublic: true });
  h.directory.addBucket({ name: 'other-b', customerId: 'c2' });
  h.directory.addKey({
    accessKeyId: 'AKFULL',
    customerId: 'c1',
    kind: 'account',
    grants: [{ bucket: '*', actions: 'all' }],
    accountActions: ['s3:ListAllMyBuckets'],
  });
  h.directory.addKey({
    accessKeyId: 'AKREAD',
    customerId: 'c1',
    grants: [{ bucket: 'private-b', actions: ['s3:GetObject'] }],
  });
  const full = client('AKFULL');
  await full.send(new PutObjectCommand({ Bucket: 'private-b', Key: 'a.txt', Body: 'private' }));
  await full.send(new PutObjectCommand({ Bucket: 'public-b', Key: 'a.txt', Body: 'public' }));
});
afterAll(async () => h?.close());

describe('S3 authentication and authorization', () => {
  it('lists the caller’s buckets with the owner', async () => {
    const r = await client('AKFULL').send(new ListBucketsCommand({}));
    expect(r.Buckets?.map((b) => b.Name).sort()).toEqual(['private-b', 'public-b']);
    expect(r.Owner).toEqual({ ID: 'c1', DisplayName: 'Customer c1' });
  });

  it('names the failure: unknown key, wrong secret, wrong region; us-east-1 is accepted', async () => {
    const get = new GetObjectCommand({ Bucket: 'private-b', Key: 'a.txt' });
    await expect(client('AKNONE').send(get)).rejects.toMatchObject({ name: 'InvalidAccessKeyId' });
    await expect(client('AKFULL', 'wrong').send(get)).rejects.toMatchObject({
      name: 'SignatureDoesNotMatch',
    });
    await expect(client('AKFULL', undefined, 'ap-south-1').send(get)).rejects.toMatchObject({
      name: 'AuthorizationHeaderMalformed',
    });
    const ok = await client('AKFULL', undefined, 'us-east-1').send(get);
    expect(await ok.Body!.transformToString()).toBe('private');
  });

  it('lets a GetObject-only key read and refuses its PUT', async () => {
    const read = client('AKREAD');
    const got = await read.send(new GetObjectCommand({ Bucket: 'private-b', Key: 'a.txt' }));
    expect(await got.Body!.transformToString()).toBe('private');
    await expect(
      read.send(new PutObjectCommand({ Bucket: 'private-b', Key: 'b.txt', Body: 'x' })),
    ).rejects.toMatchObject({
      name: 'AccessDenied',
    });
  });

  it('serves anonymous reads of a public bucket only, and hides other customers’ buckets', async () => {
    expect(await (await fetch(`${h.endpoint}/public-b/a.txt`)).text()).toBe('public');
    const denied = await fetch(`${h.endpoint}/private-b/a.txt`);
    expect(denied.status).toBe(403);
    expect(await denied.text()).toMatch(/<Code>AccessDenied<\/Code>.*<RequestId>/s);
    expect((await fetch(`${h.endpoint}/public-b/a.txt`, { method: 'PUT', body: 'x' })).status).toBe(403);
    await expect(
      client('AKFULL').send(new GetObjectCommand({ Bucket: 'other-b', Key: 'a.txt' })),
    ).rejects.toMatchObject({
      name: 'NoSuchBucket',
    });
  });

  it('stops a revoked key at once', async () => {
    h.directory.addKey({
      accessKeyId: 'AKTEMP',
      customerId: 'c1',
      grants: [{ bucket: 'private-b', actions: 'all' }],
    });
    const temp = client('AKTEMP');
    await temp.send(new GetObjectCommand({ Bucket: 'private-b', Key: 'a.txt' }));
    h.directory.revokeKey('AKTEMP');
    await expect(
      temp.send(new GetObjectCommand({ Bucket: 'private-b', Key: 'a.txt' })),
    ).rejects.toMatchObject({
      name: 'InvalidAccessKeyId',
    });
  });

  it('stores streamed bodies sent with checksum trailers, framing removed', async () => {
    const full = client('AKFULL');
    const body = Readable.from([Buffer.from('chunk one, '), Buffer.from('chunk two')]);
    await full.send(
      new PutObjectCommand({ Bucket: 'private-b', Key: 'streamed', Body: body, ContentLength: 20 }),
    );
    const got = await full.send(new GetObjectCommand({ Bucket: 'private-b', Key: 'streamed' }));
    expect(await got.Body!.transformToString()).toBe('chunk one, chunk two');
  });

  it('refuses a trailer checksum that does not match', async () => {
    const body = '5\r\nhello\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n';
    const status = await rawPut(
      '/private-b/bad-crc',
      body,
      {
        'content-encoding': 'aws-chunked',
        'x-amz-decoded-content-length': '5',
        'x-amz-trailer': 'x-amz-checksum-crc32',
      },
      'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
    );
    expect(status.code).toBe(400);
    expect(status.text).toContain('BadDigest');
    const good = '5\r\nhello\r\n0\r\nx-amz-checksum-crc32:NhCmhg==\r\n\r\n';
    const ok = await rawPut(
      '/private-b/good-crc',
      good,
      {
        'content-encoding': 'aws-chunked',
        'x-amz-decoded-content-length': '5',
        'x-amz-trailer': 'x-amz-checksum-crc32',
      },
      'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
    );
    expect(ok.code).toBe(200);
    expect(await (await fetch(`${h.endpoint}/public-b/a.txt`)).text()).toBe('public');
  });

  it('refuses a body that does not match its signed SHA-256, and a request signed 20 minutes ago', async () => {
    const wrong = await rawPut('/private-b/tampered', 'hello', {}, 'a'.repeat(64));
    expect(wrong.text).toContain('XAmzContentSHA256Mismatch');
    // An upper-case digest is still a digest: checked, not waved through.
    const upper = await rawPut('/private-b/tampered', 'hello', {}, 'A'.repeat(64));
    expect(upper.text).toContain('XAmzContentSHA256Mismatch');
    const exact = createHash('sha256').update('hello').digest('hex').toUpperCase();
    expect((await rawPut('/private-b/upper-ok', 'hello', {}, exact)).code).toBe(200);
    // Neither a digest nor one of S3's values: refused.
    const odd = await rawPut('/private-b/odd', 'hello', {}, 'not-a-digest');
    expect(odd.code).toBe(400);
    expect(odd.text).toContain('InvalidArgument');
    const late = await rawPut(
      '/private-b/late',
      'hello',
      {},
      UNSIGNED_PAYLOAD,
      undefined,
      Date.now() - 20 * 60_000,
    );
    expect(late.code).toBe(403);
    expect(late.text).toContain('RequestTimeTooSkewed');
    await expect(
      client('AKFULL').send(new GetObjectCommand({ Bucket: 'private-b', Key: 'tampered' })),
    ).rejects.toMatchObject({
      name: 'NoSuchKey',
    });
  });

  it('addresses buckets by virtual host under the base domain', async () => {
    const r = await rawPut('/vhost.txt', 'via host', {}, UNSIGNED_PAYLOAD, 'private-b.s3.test');
    expect(r.code).toBe(200);
    const got = await client('AKFULL').send(new GetObjectCommand({ Bucket: 'private-b', Key: 'vhost.txt' }));
    expect(await got.Body!.transformToString()).toBe('via host');
  });
});

describe('CORS and browser uploads', () => {
  it('answers a preflight from the bucket’s CORS document before any auth', async () => {
    const origin = 'https://app.example.com';
    const pre = () =>
      fetch(`${h.endpoint}/private-b/a.txt`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'PUT',
          'access-control-request-headers': 'content-type',
        },
      });
    expect((await pre()).status).toBe(403);
    await client('AKFULL').send(
      new PutBucketCorsCommand({
        Bucket: 'private-b',
        CORSConfiguration: {
          CORSRules: [
            {
              AllowedOrigins: [origin],
              AllowedMethods: ['GET', 'PUT'],
              AllowedHeaders: ['*'],
              MaxAgeSeconds: 600,
            },
          ],
        },
      }),
    );
    const ok = await pre();
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(origin);
    expect(ok.headers.get('access-control-allow-methods')).toContain('PUT');
    expect(ok.headers.get('access-control-max-age')).toBe('600');
    const url = await getSignedUrl(
      client('AKFULL'),
      new GetObjectCommand({ Bucket: 'private-b', Key: 'a.txt' }),
    );
    const actual = await fetch(url, { headers: { origin } });
    expect(actual.headers.get('access-control-allow-origin')).toBe(origin);
    expect(actual.headers.get('access-control-expose-headers')).toContain('ETag');
  });

  it('takes a PostObject form upload within its policy', async () => {
    const { url, fields } = await createPresignedPost(client('AKFULL'), {
      Bucket: 'private-b',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: S3's own placeholder, replaced by the server
      Key: 'uploads/${filename}',
      Conditions: [
        ['starts-with', '$key', 'uploads/'],
        ['content-length-range', 1, 1000],
      ],
      Expires: 600,
    });
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append('file', new Blob(['form body']), 'hello.txt');
    const res = await fetch(url, { method: 'POST', body: form });
    expect(res.status, await res.clone().text()).toBe(204);
    const got = await client('AKFULL').send(
      new GetObjectCommand({ Bucket: 'private-b', Key: 'uploads/hello.txt' }),
    );
    expect(await got.Body!.transformToString()).toBe('form body');
    const big = new FormData();
    for (const [k, v] of Object.entries(fields)) big.append(k, v);
    big.append('file', new Blob([Buffer.alloc(2000)]), 'big.txt');
    const refused = await fetch(url, { method: 'POST', body: big });
    expect(refused.status).toBe(400);
  });
});

describe('presigned URLs (moves the clock, so last)', () => {
  it('refuses a presigned URL with X-Amz-Expires=0 as expired, and one over a week as malformed', async () => {
    // signed by a client whose clock runs two seconds ahead of the server's (well within the
    // allowed skew): the URL is fresh, only its zero window makes it expired
    const signingDate = new Date(h.clock.nowMs() + 2000);
    const command = new GetObjectCommand({ Bucket: 'private-b', Key: 'a.txt' });
    const zero = await getSignedUrl(client('AKFULL'), command, { expiresIn: 0, signingDate });
    for (let i = 0; i < 2; i++) {
      const res = await fetch(zero);
      expect(res.status).toBe(403);
      const body = await res.text();
      expect(body).toContain('<Code>AccessDenied</Code>');
      expect(body).toContain('<Message>Request has expired</Message>');
      expect(body).toContain('<X-Amz-Expires>0</X-Amz-Expires>');
      expect(body).toMatch(/<ServerTime>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ<\/ServerTime>/);
    }
    const week = await getSignedUrl(client('AKFULL'), command, { expiresIn: 604800, signingDate });
    expect((await fetch(week)).status).toBe(200);
    const tooLong = await fetch(week.replace(/X-Amz-Expires=\d+/, 'X-Amz-Expires=609901'));
    expect(tooLong.status).toBe(400);
    const text = await tooLong.text();
    expect(text).toContain('<Code>AuthorizationQueryParametersError</Code>');
    expect(text).toContain('the given X-Amz-Expires must be less than 604800 seconds');
  });

  it('honours presigned URLs until they expire', async () => {
    const url = await getSignedUrl(
      client('AKFULL'),
      new GetObjectCommand({ Bucket: 'private-b', Key: 'a.txt' }),
      { expiresIn: 3600 },
    );
    expect(await (await fetch(url)).text()).toBe('private');
    const tampered = url.replace('a.txt', 'b.txt');
    expect((await fetch(tampered)).status).toBe(403);
    h.clock.advance(3601);
    const expired = await fetch(url);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain('Request has expired');
    // A negative X-Amz-Expires (boto3 signs what it is asked) is AWS's 400, not an expiry.
    const negative = await fetch(url.replace(/X-Amz-Expires=\d+/, 'X-Amz-Expires=-1000'));
    expect(negative.status).toBe(400);
    expect(await negative.text()).toContain('X-Amz-Expires must be non-negative');
  });
});

async function rawPut(
  path: string,
  body: string,
  extra: Record<string, string>,
  payloadHash: string,
  host?: string,
  nowMs = Date.now(),
) {
  const u = new URL(h.endpoint);
  const hostHeader = host ? `${host}:${u.port}` : u.host;
  const headers = signRequest({
    method: 'PUT',
    path,
    headers: { host: hostHeader, 'content-length': String(Buffer.byteLength(body)), ...extra },
    accessKeyId: 'AKFULL',
    secret: 'secret-AKFULL',
    region: 'eu-north-1',
    nowMs,
    payloadHash,
  });
  return new Promise<{ code: number; text: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: u.port, method: 'PUT', path, headers }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
