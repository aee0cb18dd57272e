import { createHmac } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presignUrlV2 } from './sigv2.js';
import { type Harness, startHarness } from './testing/harness.js';

/**
 * Signature Version 2 on the data plane: header-signed requests (path and virtual-hosted),
 * presigned URLs on the emulator clock, the browser POST form with a V2 policy, and the same
 * grants and bucket policies as version 4. Requests are signed here independently of sigv2.ts.
 */
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
    // A date before 1970 is no valid date at all, as S3 answers it (not a skewed one).
    const beforeEpoch = await v2('GET', '/v2-b/x', { date: 'Tue, 07 Jul 1950 21:53:04 GMT' });
    expect(beforeEpoch.status).toBe(403);
    expect(beforeEpoch.text).toContain('<Code>AccessDenied</Code>');
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
    const presign = (expires: number) =>
      presignUrlV2({
        endpoint: h.endpoint,
        path: '/v2-b/shared.txt',
        accessKeyId: 'AKV2',
        secret: 'secret-AKV2',
        expires,
      });
    // An expiry whose signature has a '+' in it, for the unescaped-'+' check below.
    let expires = Math.floor(h.clock.nowMs() / 1000) + 600;
    while (!presign(expires).includes('%2B')) expires++;
    const url = presign(expires);
    expect(await (await fetch(url)).text()).toBe('shared');
    // A signature with its '+' left unescaped (it arrives as a space) is still the signature.
    expect((await fetch(url.replace(/%2B/g, '+'))).status).toBe(200);
    const tampered = await fetch(url.replace('shared.txt', 'other.txt'));
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).toContain('SignatureDoesNotMatch');
    h.clock.advance(expires - h.clock.nowMs() / 1000 + 1);
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
