import { createHmac } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presignUrlV2, stringsToSign, verifyV2 } from './sigv2.js';
import type { SignedRequest } from './sigv4.js';
import { type Harness, startHarness } from './testing/harness.js';

/**
 * Signature Version 2. The first block replays the examples of AWS's S3 developer guide
 * ("Signing and authenticating REST requests"): their StringToSign and signature must come out
 * exactly. The examples' signatures were computed for the bucket `johnsmith` (later editions of
 * the guide renamed the bucket in the text but kept the signatures).
 */
const EXAMPLE_ID = 'AKIAIOSFODNN7EXAMPLE';
const EXAMPLE_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

function request(method: string, url: string, headers: [string, string][]): SignedRequest {
  const lower: Record<string, string> = {};
  for (const [k, v] of headers) {
    const n = k.toLowerCase();
    lower[n] = lower[n] === undefined ? v : `${lower[n]}, ${v}`;
  }
  return { method, url, rawHeaders: headers.flat(), headers: lower };
}

const headerCred = (signature: string, date: string) => ({
  kind: 'header' as const,
  accessKeyId: EXAMPLE_ID,
  signature,
  dateText: date,
  expires: null,
});

describe('AWS’s published Signature Version 2 examples', () => {
  const cases: {
    name: string;
    req: SignedRequest;
    bucket: string | null;
    sts: string;
    sig: string;
  }[] = [
    {
      name: 'Object GET',
      req: request('GET', '/photos/puppy.jpg', [
        ['Host', 'johnsmith.s3.amazonaws.com'],
        ['Date', 'Tue, 27 Mar 2007 19:36:42 +0000'],
      ]),
      bucket: 'johnsmith',
      sts: 'GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/johnsmith/photos/puppy.jpg',
      sig: 'bWq2s1WEIj+Ydj0vQ697zp+IXMU=',
    },
    {
      name: 'Object PUT',
      req: request('PUT', '/photos/puppy.jpg', [
        ['Content-Type', 'image/jpeg'],
        ['Content-Length', '94328'],
        ['Host', 'johnsmith.s3.amazonaws.com'],
        ['Date', 'Tue, 27 Mar 2007 21:15:45 +0000'],
      ]),
      bucket: 'johnsmith',
      sts: 'PUT\n\nimage/jpeg\nTue, 27 Mar 2007 21:15:45 +0000\n/johnsmith/photos/puppy.jpg',
      sig: 'MyyxeRY7whkBe+bq8fHCL/2kKUg=',
    },
    {
      name: 'List',
      req: request('GET', '/?prefix=photos&max-keys=50&marker=puppy', [
        ['User-Agent', 'Mozilla/5.0'],
        ['Host', 'johnsmith.s3.amazonaws.com'],
        ['Date', 'Tue, 27 Mar 2007 19:42:41 +0000'],
      ]),
      bucket: 'johnsmith',
      sts: 'GET\n\n\nTue, 27 Mar 2007 19:42:41 +0000\n/johnsmith/',
      sig: 'htDYFYduRNen8P9ZfE/s9SuKy0U=',
    },
    {
      name: 'Fetch (acl sub-resource)',
      req: request('GET', '/?acl', [
        ['Host', 'johnsmith.s3.amazonaws.com'],
        ['Date', 'Tue, 27 Mar 2007 19:44:46 +0000'],
      ]),
      bucket: 'johnsmith',
      sts: 'GET\n\n\nTue, 27 Mar 2007 19:44:46 +0000\n/johnsmith/?acl',
      sig: 'c2WLPFtWHVgbEmeEG93a4cG37dM=',
    },
    {
      name: 'Upload (x-amz headers sorted, lower-cased, joined)',
      req: request('PUT', '/db-backup.dat.gz', [
        ['User-Agent', 'curl/7.15.5'],
        ['Host', 'static.johnsmith.net:8080'],
        ['Date', 'Tue, 27 Mar 2007 21:06:08 +0000'],
        ['x-amz-acl', 'public-read'],
        ['content-type', 'application/x-download'],
        ['Content-MD5', '4gJE4saaMU4BqNR0kLY+lw=='],
        ['X-Amz-Meta-ReviewedBy', 'joe@johnsmith.net'],
        ['X-Amz-Meta-ReviewedBy', 'jane@johnsmith.net'],
        ['X-Amz-Meta-FileChecksum', '0x02661779'],
        ['X-Amz-Meta-ChecksumAlgorithm', 'crc32'],
        ['Content-Disposition', 'attachment; filename=database.dat'],
        ['Content-Encoding', 'gzip'],
        ['Content-Length', '5913339'],
      ]),
      bucket: 'static.johnsmith.net',
      sts:
        'PUT\n4gJE4saaMU4BqNR0kLY+lw==\napplication/x-download\nTue, 27 Mar 2007 21:06:08 +0000\n' +
        'x-amz-acl:public-read\nx-amz-meta-checksumalgorithm:crc32\nx-amz-meta-filechecksum:0x02661779\n' +
        'x-amz-meta-reviewedby:joe@johnsmith.net,jane@johnsmith.net\n/static.johnsmith.net/db-backup.dat.gz',
      sig: 'ilyl83RwaSoYIEdixDQcA4OnAnc=',
    },
    {
      name: 'List all my buckets',
      req: request('GET', '/', [
        ['Host', 's3.amazonaws.com'],
        ['Date', 'Wed, 28 Mar 2007 01:29:59 +0000'],
      ]),
      bucket: null,
      sts: 'GET\n\n\nWed, 28 Mar 2007 01:29:59 +0000\n/',
      sig: 'qGdzdERIC03wnaRNKh6OqZehG9s=',
    },
    {
      name: 'Unicode keys (the path taken literally)',
      req: request('GET', '/dictionary/fran%C3%A7ais/pr%c3%a9f%c3%a8re', [
        ['Host', 's3.amazonaws.com'],
        ['Date', 'Wed, 28 Mar 2007 01:49:49 +0000'],
      ]),
      bucket: null,
      sts: 'GET\n\n\nWed, 28 Mar 2007 01:49:49 +0000\n/dictionary/fran%C3%A7ais/pr%c3%a9f%c3%a8re',
      sig: 'DNEZGsoieTZ92F3bUfSPQcbGmlM=',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const date = c.req.headers['date'] as string;
      expect(stringsToSign(c.req, headerCred(c.sig, date), c.bucket)[0]).toBe(c.sts);
      expect(() => verifyV2(c.req, headerCred(c.sig, date), EXAMPLE_SECRET, c.bucket)).not.toThrow();
      const bad = headerCred(`${c.sig.slice(0, -2)}A=`, date);
      expect(() => verifyV2(c.req, bad, EXAMPLE_SECRET, c.bucket)).toThrow(/does not match/);
    });
  }

  it('Delete with x-amz-date: the guide’s form (date slot) and the clients’ form (header)', () => {
    const req = request('DELETE', '/johnsmith/photos/puppy.jpg', [
      ['User-Agent', 'dotnet'],
      ['Host', 's3.amazonaws.com'],
      ['Date', 'Tue, 27 Mar 2007 21:20:27 +0000'],
      ['x-amz-date', 'Tue, 27 Mar 2007 21:20:26 +0000'],
    ]);
    const cred = headerCred('lx3byBScXR6KzyMaifNkardMwNk=', 'Tue, 27 Mar 2007 21:20:26 +0000');
    const all = stringsToSign(req, cred, null);
    expect(all).toContain('DELETE\n\n\nTue, 27 Mar 2007 21:20:26 +0000\n/johnsmith/photos/puppy.jpg');
    expect(all[0]).toBe(
      'DELETE\n\n\n\nx-amz-date:Tue, 27 Mar 2007 21:20:26 +0000\n/johnsmith/photos/puppy.jpg',
    );
    expect(() => verifyV2(req, cred, EXAMPLE_SECRET, null)).not.toThrow();
  });

  it('Query string authentication', () => {
    const url = `/photos/puppy.jpg?AWSAccessKeyId=${EXAMPLE_ID}&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D&Expires=1175139620`;
    const req = request('GET', url, [['Host', 'johnsmith.s3.amazonaws.com']]);
    const cred = {
      kind: 'query' as const,
      accessKeyId: EXAMPLE_ID,
      signature: 'NpgCjnDzrM+WFzoENXmpNDUsSn8=',
      dateText: null,
      expires: 1175139620,
    };
    expect(stringsToSign(req, cred, 'johnsmith')[0]).toBe('GET\n\n\n1175139620\n/johnsmith/photos/puppy.jpg');
    expect(() => verifyV2(req, cred, EXAMPLE_SECRET, 'johnsmith')).not.toThrow();
  });

  it('signs sub-resources sorted, with values, and leaves other parameters out', () => {
    const req = request(
      'GET',
      '/b/k?versionId=v1&response-content-type=text%2Fplain&prefix=x&uploadId=u%2B1&partNumber=2',
      [['Date', 'Tue, 27 Mar 2007 19:36:42 +0000']],
    );
    expect(stringsToSign(req, headerCred('x', 'd'), null)[0]).toBe(
      'GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/b/k?partNumber=2&response-content-type=text/plain&uploadId=u+1&versionId=v1',
    );
    // Clients that predate the newer sub-resources sign them as ordinary parameters.
    const late = request('GET', '/b?encryption', [['Date', 'Tue, 27 Mar 2007 19:36:42 +0000']]);
    const variants = stringsToSign(late, headerCred('x', 'd'), null);
    expect(variants[0]).toBe('GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/b?encryption');
    expect(variants).toContain('GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/b');
  });
});

let h: Harness;
let port: string;
const sign = (secret: string, sts: string) => createHmac('sha1', secret).update(sts).digest('base64');

beforeAll(async () => {
  h = await startHarness({ FJORD_S3_BASE_DOMAIN: 's3.test' });
  port = new URL(h.endpoint).port;
  h.directory.addBucket({ name: 'v2-b', customerId: 'c1' });
  h.directory.addBucket({ name: 'v2-pol', customerId: 'c1' });
  h.directory.addKey({ accessKeyId: 'AKV2', customerId: 'c1', grants: [{ bucket: '*', actions: 'all' }] });
  h.directory.addKey({
    accessKeyId: 'AKV2READ',
    customerId: 'c1',
    grants: [{ bucket: 'v2-b', actions: ['s3:GetObject'] }],
  });
});
afterAll(async () => h?.close());

interface Sent {
  status: number;
  text: string;
  headers: http.IncomingHttpHeaders;
}

function send(method: string, path: string, headers: Record<string, string>, body = ''): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: { 'content-length': String(body.length), ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A V2 header-signed request, its StringToSign built here independently of sigv2.ts. */
function v2(
  method: string,
  path: string,
  opts: {
    id?: string;
    secret?: string;
    headers?: Record<string, string>;
    body?: string;
    date?: string;
    resource?: string;
    host?: string;
  } = {},
): Promise<Sent> {
  const id = opts.id ?? 'AKV2';
  const date = opts.date ?? new Date(h.clock.nowMs()).toUTCString();
  const headers: Record<string, string> = { host: opts.host ?? `127.0.0.1:${port}`, date, ...opts.headers };
  if (!date) delete headers['date'];
  const amz = Object.keys(headers)
    .filter((k) => k.startsWith('x-amz-'))
    .sort()
    .map((k) => `${k}:${headers[k]}\n`)
    .join('');
  const sts = `${method}\n${headers['content-md5'] ?? ''}\n${headers['content-type'] ?? ''}\n${date}\n${amz}${opts.resource ?? path}`;
  headers['authorization'] = `AWS ${id}:${sign(opts.secret ?? `secret-${id}`, sts)}`;
  return send(method, path, headers, opts.body);
}

describe('Signature Version 2 on the data plane', () => {
  it('puts, gets, lists and deletes with header signatures, path and virtual-hosted style', async () => {
    const put = await v2('PUT', '/v2-b/hello.txt', {
      body: 'hello v2',
      headers: { 'content-type': 'text/plain', 'x-amz-meta-who': 'old tool' },
    });
    expect(put.status).toBe(200);
    const got = await v2('GET', '/v2-b/hello.txt');
    expect(got.text).toBe('hello v2');
    expect(got.headers['x-amz-meta-who']).toBe('old tool');
    const virtual = await v2('GET', '/hello.txt', {
      host: `v2-b.s3.test:${port}`,
      resource: '/v2-b/hello.txt',
    });
    expect(virtual.text).toBe('hello v2');
    const list = await v2('GET', '/v2-b?prefix=hel&max-keys=5', { resource: '/v2-b' });
    expect(list.text).toContain('<Key>hello.txt</Key>');
    const acl = await v2('GET', '/v2-b/hello.txt?acl');
    expect(acl.status).toBe(200);
    expect(acl.text).toContain('AccessControlPolicy');
    const withAmzDate = await v2('HEAD', '/v2-b/hello.txt', {
      date: '',
      headers: { 'x-amz-date': new Date(h.clock.nowMs()).toUTCString() },
    });
    expect(withAmzDate.status).toBe(200);
    expect((await v2('DELETE', '/v2-b/hello.txt')).status).toBe(204);
    expect((await v2('GET', '/v2-b/hello.txt')).status).toBe(404);
  });

  it('refuses a wrong signature with the StringToSign, an unknown key, a missing or skewed date', async () => {
    const bad = await v2('GET', '/v2-b/x', { secret: 'wrong' });
    expect(bad.status).toBe(403);
    expect(bad.text).toContain('<Code>SignatureDoesNotMatch</Code>');
    expect(bad.text).toContain('<StringToSign>GET\n\n\n');
    expect(bad.text).toContain('/v2-b/x</StringToSign>');
    expect(bad.text).toContain('<AWSAccessKeyId>AKV2</AWSAccessKeyId>');
    const unknown = await v2('GET', '/v2-b/x', { id: 'AKNOBODY' });
    expect(unknown.text).toContain('<Code>InvalidAccessKeyId</Code>');
    const noDate = await send('GET', '/v2-b/x', { authorization: `AWS AKV2:${sign('secret-AKV2', 'x')}` });
    expect(noDate.status).toBe(403);
    expect(noDate.text).toContain('AWS authentication requires a valid Date or x-amz-date header');
    const old = new Date(h.clock.nowMs() - 16 * 60_000).toUTCString();
    const skewed = await v2('GET', '/v2-b/x', { date: old });
    expect(skewed.status).toBe(403);
    expect(skewed.text).toContain('<Code>RequestTimeTooSkewed</Code>');
    expect(skewed.text).toContain(`<RequestTime>${old}</RequestTime>`);
    const malformed = await send('GET', '/v2-b/x', {
      authorization: 'AWS AKV2',
      date: new Date().toUTCString(),
    });
    expect(malformed.status).toBe(400);
    expect(malformed.text).toContain('<Code>InvalidArgument</Code>');
  });

  it('applies the key’s grants and bucket policies as for version 4', async () => {
    await v2('PUT', '/v2-b/r.txt', { body: 'r' });
    expect((await v2('GET', '/v2-b/r.txt', { id: 'AKV2READ' })).text).toBe('r');
    const denied = await v2('PUT', '/v2-b/r.txt', { id: 'AKV2READ', body: 'no' });
    expect(denied.status).toBe(403);
    expect(denied.text).toContain('<Code>AccessDenied</Code>');
    // A policy that refuses Signature Version 2 (s3:signatureversion is "AWS" for it).
    h.directory.update('v2-pol', {
      policy: JSON.stringify({
        Version: '2012-10-17',
        Statement: [
          {
            Effect: 'Deny',
            Principal: '*',
            Action: 's3:*',
            Resource: 'arn:aws:s3:::v2-pol/*',
            Condition: { StringEquals: { 's3:signatureversion': 'AWS' } },
          },
        ],
      }),
    });
    const refused = await v2('PUT', '/v2-pol/p.txt', { body: 'p' });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('<Code>AccessDenied</Code>');
  });

  it('serves presigned V2 URLs until they expire on the clock', async () => {
    await v2('PUT', '/v2-b/shared.txt', { body: 'shared' });
    const expires = Math.floor(h.clock.nowMs() / 1000) + 600;
    const url = presignUrlV2({
      endpoint: h.endpoint,
      path: '/v2-b/shared.txt',
      accessKeyId: 'AKV2',
      secret: 'secret-AKV2',
      expires,
    });
    expect(await (await fetch(url)).text()).toBe('shared');
    const tampered = await fetch(url.replace('shared.txt', 'other.txt'));
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).toContain('SignatureDoesNotMatch');
    h.clock.advance(601);
    const expired = await fetch(url);
    expect(expired.status).toBe(403);
    const text = await expired.text();
    expect(text).toContain('<Code>AccessDenied</Code>');
    expect(text).toContain('<Message>Request has expired</Message>');
    expect(text).toContain(`<Expires>${new Date(expires * 1000).toISOString()}</Expires>`);
  });

  it('accepts a browser POST form signed with a V2 policy, checking its conditions', async () => {
    const policy = (conditions: unknown[], expiration = new Date(h.clock.nowMs() + 3600_000)) =>
      Buffer.from(JSON.stringify({ expiration: expiration.toISOString(), conditions })).toString('base64');
    const post = (fields: Record<string, string>) => {
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) form.append(k, v);
      form.append('file', new Blob(['form body']), 'f.txt');
      return fetch(`${h.endpoint}/v2-b`, { method: 'POST', body: form });
    };
    const ok = policy([{ bucket: 'v2-b' }, ['starts-with', '$key', 'up/'], ['content-length-range', 0, 100]]);
    const good = await post({
      // biome-ignore lint/suspicious/noTemplateCurlyInString: S3's own placeholder for the file's name
      key: 'up/${filename}',
      AWSAccessKeyId: 'AKV2',
      policy: ok,
      signature: sign('secret-AKV2', ok),
    });
    expect(good.status).toBe(204);
    expect((await v2('GET', '/v2-b/up/f.txt')).text).toBe('form body');
    const badSig = await post({
      key: 'up/a',
      AWSAccessKeyId: 'AKV2',
      policy: ok,
      signature: sign('nope', ok),
    });
    expect(badSig.status).toBe(403);
    expect(await badSig.text()).toContain('SignatureDoesNotMatch');
    const outside = await post({
      key: 'down/a',
      AWSAccessKeyId: 'AKV2',
      policy: ok,
      signature: sign('secret-AKV2', ok),
    });
    expect(outside.status).toBe(403);
    expect(await outside.text()).toContain('Invalid according to Policy');
    const extra = await post({
      key: 'up/a',
      'x-amz-meta-x': '1',
      AWSAccessKeyId: 'AKV2',
      policy: ok,
      signature: sign('secret-AKV2', ok),
    });
    expect(await extra.text()).toContain('Extra input fields: x-amz-meta-x');
    const old = policy([{ bucket: 'v2-b' }], new Date(h.clock.nowMs() - 1000));
    const expired = await post({
      key: 'a',
      AWSAccessKeyId: 'AKV2',
      policy: old,
      signature: sign('secret-AKV2', old),
    });
    expect(await expired.text()).toContain('Policy expired');
    const unknown = await post({ key: 'a', AWSAccessKeyId: 'AKNOBODY', policy: ok, signature: 'x' });
    expect(await unknown.text()).toContain('InvalidAccessKeyId');
    const readOnly = policy([{ bucket: 'v2-b' }, ['starts-with', '$key', '']]);
    const refused = await post({
      key: 'ro',
      AWSAccessKeyId: 'AKV2READ',
      policy: readOnly,
      signature: sign('secret-AKV2READ', readOnly),
    });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('AccessDenied');
  });
});
