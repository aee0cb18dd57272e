import { execFile } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestFjord } from '../helpers/fjord.js';
import { type S3ClientsFixture, s3ClientsFixture } from '../helpers/s3-clients.js';

/**
 * AWS Signature Version 2 with the real clients older tools use: s3cmd `--signature-v2` (put, get,
 * list, multipart, delete, signurl), curl fetching a V2 presigned URL and posting a browser form
 * signed with a V2 policy, and botocore's `signature_version='s3'` when boto3 is installed.
 */
const run = promisify(execFile);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const hmac = (secret: string, s: string) => createHmac('sha1', secret).update(s).digest('base64');

let t: TestFjord;
let endpoint: string;
let bucket: string;
let dir: string;
let env: NodeJS.ProcessEnv;
let keys: { access: string; secret: string };

let s3: S3ClientsFixture;
beforeAll(async () => {
  s3 = await s3ClientsFixture('sigv2', { signatureV2: true });
  ({ t, endpoint, bucket, dir, env, keys } = s3);
});
afterAll(() => s3?.close());

const s3cmd = (...args: string[]) =>
  run('s3cmd', ['-c', join(dir, 's3cfg'), '--signature-v2', ...args], { env, maxBuffer: 1 << 26 });
const curl = (...args: string[]) => run('curl', ['-s', ...args], { env, maxBuffer: 1 << 26 });

describe('s3cmd --signature-v2', () => {
  it('puts and gets the same bytes (simple and multipart), lists and deletes', async () => {
    const files = [
      { name: 'one.bin', data: randomBytes(1) },
      { name: 'small.bin', data: randomBytes(70_000) },
      { name: 'parts.bin', data: randomBytes(11 * 1024 * 1024 + 7) },
    ];
    for (const f of files) {
      const path = join(dir, f.name);
      writeFileSync(path, f.data);
      await s3cmd('put', '--multipart-chunk-size-mb=5', path, `s3://${bucket}/v2/${f.name}`);
      const back = join(dir, `back-${f.name}`);
      await s3cmd('get', '--force', `s3://${bucket}/v2/${f.name}`, back);
      expect(sha(readFileSync(back))).toBe(sha(f.data));
    }
    // s3cmd shows its own MD5 attribute, not the ETag: ask the server (a multipart ETag ends in -3).
    const head = await curl(...(await signedHead(`/${bucket}/v2/parts.bin`)));
    expect(head.stdout).toMatch(/etag: "[0-9a-f]{32}-3"/i);
    // Keys that need escaping: the path is signed as it goes on the wire.
    await s3cmd('put', join(dir, 'one.bin'), `s3://${bucket}/v2/sp ace+ä(1)~.bin`);
    await s3cmd('get', '--force', `s3://${bucket}/v2/sp ace+ä(1)~.bin`, join(dir, 'back-odd.bin'));
    expect(readFileSync(join(dir, 'back-odd.bin'))).toEqual(files[0]!.data);
    const ls = await s3cmd('ls', `s3://${bucket}/v2/`);
    for (const f of files) expect(ls.stdout).toContain(f.name);
    expect(ls.stdout).toContain('sp ace+ä(1)~.bin');
    await s3cmd('del', `s3://${bucket}/v2/one.bin`);
    expect((await s3cmd('ls', `s3://${bucket}/v2/`)).stdout).not.toContain('one.bin');
  }, 180_000);

  it('signs a URL (signurl) that curl fetches until the clock passes its expiry', async () => {
    const { stdout } = await s3cmd('signurl', `s3://${bucket}/v2/small.bin`, '+300');
    const url = stdout.trim().replace(/^https?:\/\/[^/]+/, endpoint.replace(/\/$/, ''));
    expect(url).toContain('Signature=');
    const out = join(dir, 'signed.bin');
    const got = await curl('-o', out, '-w', '%{http_code}', url);
    expect(got.stdout).toBe('200');
    expect(readFileSync(out).length).toBe(70_000);
    await t.advance(301);
    const late = await curl(url);
    expect(late.stdout).toContain('<Code>AccessDenied</Code>');
    expect(late.stdout).toContain('<Message>Request has expired</Message>');
  });

  it('is refused with a wrong secret (SignatureDoesNotMatch) and an unknown key', async () => {
    const cfg = readFileSync(join(dir, 's3cfg'), 'utf8');
    writeFileSync(join(dir, 's3cfg-bad'), cfg.replace(`secret_key = ${keys.secret}`, 'secret_key = wrong'));
    const bad = await run(
      's3cmd',
      ['-c', join(dir, 's3cfg-bad'), '--signature-v2', 'ls', `s3://${bucket}/`],
      {
        env,
      },
    ).catch((e) => e);
    expect(`${bad.stdout}${bad.stderr}`).toContain('SignatureDoesNotMatch');
    writeFileSync(
      join(dir, 's3cfg-none'),
      cfg.replace(`access_key = ${keys.access}`, 'access_key = AKNOBODY'),
    );
    const none = await run(
      's3cmd',
      ['-c', join(dir, 's3cfg-none'), '--signature-v2', 'ls', `s3://${bucket}/`],
      {
        env,
      },
    ).catch((e) => e);
    expect(`${none.stdout}${none.stderr}`).toContain('InvalidAccessKeyId');
  });
});

describe('curl', () => {
  it('sends a header-signed request; a skewed Date is refused', async () => {
    await s3cmd('put', join(dir, 'small.bin'), `s3://${bucket}/v2/head.bin`);
    const ok = await curl(...(await signedHead(`/${bucket}/v2/head.bin`)));
    expect(ok.stdout).toMatch(/^HTTP\/1.1 200/);
    const skewed = await curl(...(await signedHead(`/${bucket}/v2/head.bin`, -3600_000)));
    await expect(skewed.stdout).toMatch(/^HTTP\/1.1 403/);
  });

  it('uploads a browser form signed with a V2 policy (curl -F)', async () => {
    const nowMs = Date.now() + (await clockOffsetMs());
    const policy = Buffer.from(
      JSON.stringify({
        expiration: new Date(nowMs + 600_000).toISOString(),
        conditions: [
          { bucket },
          ['starts-with', '$key', 'forms/'],
          { success_action_status: '201' },
          ['content-length-range', 1, 1024],
        ],
      }),
    ).toString('base64');
    writeFileSync(join(dir, 'form.txt'), 'from a form');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: S3's own placeholder for the file's name
    const form = (signature: string, key = 'forms/${filename}') => [
      '-F',
      `key=${key}`,
      '-F',
      `AWSAccessKeyId=${keys.access}`,
      '-F',
      `policy=${policy}`,
      '-F',
      `signature=${signature}`,
      '-F',
      'success_action_status=201',
      '-F',
      `file=@${join(dir, 'form.txt')}`,
      `${endpoint.replace(/\/$/, '')}/${bucket}`,
    ];
    const up = await curl('-w', '\n%{http_code}', ...form(hmac(keys.secret, policy)));
    expect(up.stdout).toContain('<Key>forms/form.txt</Key>');
    expect(up.stdout.trim().endsWith('201')).toBe(true);
    const back = join(dir, 'form-back.txt');
    await s3cmd('get', '--force', `s3://${bucket}/forms/form.txt`, back);
    expect(readFileSync(back, 'utf8')).toBe('from a form');
    const bad = await curl(...form(hmac('wrong', policy)));
    expect(bad.stdout).toContain('<Code>SignatureDoesNotMatch</Code>');
    const outside = await curl(...form(hmac(keys.secret, policy), 'elsewhere/x'));
    expect(outside.stdout).toContain('Invalid according to Policy');
  });
});

// boto3 is optional here: the pyenv python3 on PATH may have it; Debian's python3 usually does not.
const boto = await run('python3', ['-c', 'import boto3'])
  .then(() => 'python3')
  .catch(() => null);

describe.skipIf(!boto)('botocore signature_version="s3"', () => {
  it('puts, gets, lists and presigns with Signature Version 2', async () => {
    const script = `
import sys, urllib.error, urllib.request, boto3
from botocore.client import Config
endpoint, bucket, key, secret = sys.argv[1:5]
s3 = boto3.client('s3', endpoint_url=endpoint, region_name='eu-north-1',
    aws_access_key_id=key, aws_secret_access_key=secret,
    config=Config(signature_version='s3', s3={'addressing_style': 'path'}))
s3.put_object(Bucket=bucket, Key='boto/a.txt', Body=b'from boto', ContentType='text/plain',
    Metadata={'tool': 'botocore'})
got = s3.get_object(Bucket=bucket, Key='boto/a.txt')
assert got['Body'].read() == b'from boto'
assert got['Metadata'] == {'tool': 'botocore'}, got['Metadata']
listed = s3.list_objects_v2(Bucket=bucket, Prefix='boto/')
assert [o['Key'] for o in listed['Contents']] == ['boto/a.txt']
s3.put_object_tagging(Bucket=bucket, Key='boto/a.txt', Tagging={'TagSet': [{'Key': 'k', 'Value': 'v'}]})
assert s3.get_object_tagging(Bucket=bucket, Key='boto/a.txt')['TagSet'] == [{'Key': 'k', 'Value': 'v'}]
url = s3.generate_presigned_url('get_object', Params={'Bucket': bucket, 'Key': 'boto/a.txt',
    'ResponseContentDisposition': 'attachment; filename="x.txt"'}, ExpiresIn=3600)
assert 'Signature=' in url and 'X-Amz-' not in url, url
try:
    r = urllib.request.urlopen(url)
except urllib.error.HTTPError as e:
    sys.exit(e.read().decode())
with r:
    assert r.read() == b'from boto'
    assert r.headers['content-disposition'] == 'attachment; filename="x.txt"'
s3.delete_object(Bucket=bucket, Key='boto/a.txt')
odd = 'boto/sp ace+ä(1)~=&.txt'
s3.put_object(Bucket=bucket, Key=odd, Body=b'odd')
assert s3.get_object(Bucket=bucket, Key=odd)['Body'].read() == b'odd'
assert s3.get_object_acl(Bucket=bucket, Key=odd)['Grants']
s3.delete_objects(Bucket=bucket, Delete={'Objects': [{'Key': odd}]})
assert 'Contents' not in s3.list_objects_v2(Bucket=bucket, Prefix='boto/')
print('ok')
`;
    writeFileSync(join(dir, 'boto-v2.py'), script);
    const { stdout } = await run(
      boto!,
      [join(dir, 'boto-v2.py'), endpoint, bucket, keys.access, keys.secret],
      {
        env: { ...env, AWS_CONFIG_FILE: '/dev/null', AWS_SHARED_CREDENTIALS_FILE: '/dev/null' },
      },
    );
    expect(stdout.trim()).toBe('ok');
  }, 60_000);
});

// fjord-test: one store (sqlite). One pass runs it: s3cmd, curl and botocore signing Version 2
// are its subject; Signature V2 itself is tested on both stores by s3/sigv2-server.test.ts.

/** curl arguments for a V2 header-signed HEAD, its Date `skewMs` away from Fjord's clock. */
async function signedHead(path: string, skewMs = 0): Promise<string[]> {
  const date = new Date(Date.now() + (await clockOffsetMs()) + skewMs).toUTCString();
  return [
    '-H',
    `Date: ${date}`,
    '-H',
    `Authorization: AWS ${keys.access}:${hmac(keys.secret, `HEAD\n\n\n${date}\n${path}`)}`,
    '-I',
    `${endpoint.replace(/\/$/, '')}${path}`,
  ];
}

/** How far the emulator clock is ahead of the wall clock (earlier tests move it). */
async function clockOffsetMs(): Promise<number> {
  const r = await t.operator('GET', '/admin/v1/clock');
  return r.status === 200 && typeof r.body?.offset_seconds === 'number' ? r.body.offset_seconds * 1000 : 0;
}
