import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestFjord } from '../helpers/fjord.js';
import { type S3ClientsFixture, s3ClientsFixture } from '../helpers/s3-clients.js';

// fjord-test: one store (postgres). One pass runs it: the S3 clients (their signing, multipart and
// bytes) are its subject; the object store's state is tested on both stores in the integration
// tier.

/**
 * ACLs, ownership controls, the public access block and bucket policies on a whole Fjord, driven
 * by Debian's aws-cli and by anonymous curl, and kept consistent with the control API's `is_public`.
 */
const run = promisify(execFile);

let t: TestFjord;
let pat: string;
let endpoint: string;
let bucket: string;
let dir: string;
let env: NodeJS.ProcessEnv;

const aws = (...args: string[]) => run('/usr/bin/aws', ['--endpoint-url', endpoint, ...args], { env });
const awsFails = (...args: string[]) =>
  aws(...args).then(
    () => 'ok',
    (err: { stderr: string }) => err.stderr,
  );
/** Anonymous curl: the status code and the S3 error code, if any. */
async function curl(path: string): Promise<{ status: number; body: string }> {
  const out = await run('curl', ['-s', '-w', '\n%{http_code}', `${endpoint}${path}`], { env });
  const lines = out.stdout.split('\n');
  return { status: Number(lines.pop()), body: lines.join('\n') };
}
const visibility = (is_public: boolean) =>
  t.request('PATCH', `/v1/storage/buckets/${bucket}/visibility`, { key: pat, body: { is_public } });

let s3: S3ClientsFixture;
beforeAll(async () => {
  s3 = await s3ClientsFixture('acl');
  ({ t, pat, endpoint, bucket, dir, env } = s3);
  writeFileSync(join(dir, 'hello.txt'), 'hello');
});
afterAll(() => s3?.close());

describe('ACLs with aws-cli and anonymous curl', () => {
  it('keeps put-bucket-acl and the control API’s is_public one setting', async () => {
    const own = JSON.parse((await aws('s3api', 'get-bucket-ownership-controls', '--bucket', bucket)).stdout);
    expect(own.OwnershipControls.Rules[0].ObjectOwnership).toBe('BucketOwnerEnforced');
    expect(await awsFails('s3api', 'put-bucket-acl', '--bucket', bucket, '--acl', 'public-read')).toMatch(
      /AccessControlListNotSupported/,
    );
    await aws(
      's3api',
      'put-bucket-ownership-controls',
      '--bucket',
      bucket,
      '--ownership-controls',
      'Rules=[{ObjectOwnership=ObjectWriter}]',
    );
    await aws('s3api', 'put-bucket-acl', '--bucket', bucket, '--acl', 'public-read');
    const shown = await t.request('GET', `/v1/storage/buckets/${bucket}`, { key: pat });
    expect(shown.body.is_public).toBe(true);
    expect((await curl(`/${bucket}?list-type=2`)).status).toBe(200);

    expect((await visibility(false)).status).toBe(200);
    const acl = JSON.parse((await aws('s3api', 'get-bucket-acl', '--bucket', bucket)).stdout);
    expect(JSON.stringify(acl.Grants)).not.toContain('AllUsers');
    expect((await curl(`/${bucket}?list-type=2`)).body).toContain('<Code>AccessDenied</Code>');
  });

  it('serves a public-read object to anonymous curl and refuses a private one', async () => {
    const hello = join(dir, 'hello.txt');
    await aws(
      's3api',
      'put-object',
      '--bucket',
      bucket,
      '--key',
      'open.txt',
      '--body',
      hello,
      '--acl',
      'public-read',
    );
    await aws('s3api', 'put-object', '--bucket', bucket, '--key', 'closed.txt', '--body', hello);
    expect(await curl(`/${bucket}/open.txt`)).toEqual({ status: 200, body: 'hello' });
    const closed = await curl(`/${bucket}/closed.txt`);
    expect(closed.status).toBe(403);
    expect(closed.body).toContain('<Code>AccessDenied</Code>');
    const acl = JSON.parse(
      (await aws('s3api', 'get-object-acl', '--bucket', bucket, '--key', 'open.txt')).stdout,
    );
    expect(acl.Grants.map((g: { Permission: string }) => g.Permission)).toEqual(['FULL_CONTROL', 'READ']);
  });

  it('blocks making the bucket public, from S3 and from the control API, under BlockPublicAcls', async () => {
    await aws(
      's3api',
      'put-public-access-block',
      '--bucket',
      bucket,
      '--public-access-block-configuration',
      'BlockPublicAcls=true,IgnorePublicAcls=false,BlockPublicPolicy=false,RestrictPublicBuckets=false',
    );
    expect(await awsFails('s3api', 'put-bucket-acl', '--bucket', bucket, '--acl', 'public-read')).toMatch(
      /AccessDenied/,
    );
    const refused = await visibility(true);
    expect(refused.status).toBe(409);
    expect(refused.body.detail.code).toBe('public_access_blocked');
    await aws('s3api', 'delete-public-access-block', '--bucket', bucket);
    expect((await visibility(true)).status).toBe(200);
    expect((await visibility(false)).status).toBe(200);
  });
});

describe('bucket policies with aws-cli', () => {
  it('refuses a malformed policy with the reason, and applies a stored one to anonymous readers', async () => {
    const bad = JSON.stringify({ Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject' }] });
    expect(await awsFails('s3api', 'put-bucket-policy', '--bucket', bucket, '--policy', bad)).toMatch(
      /MalformedPolicy.*Missing required field Resource/,
    );
    const policy = JSON.stringify({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Principal: '*',
          Action: 's3:GetObject',
          Resource: `arn:aws:s3:::${bucket}/closed.*`,
        },
        {
          Effect: 'Deny',
          Principal: '*',
          Action: 's3:GetObject',
          Resource: `arn:aws:s3:::${bucket}/open.txt`,
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        },
      ],
    });
    writeFileSync(join(dir, 'policy.json'), policy);
    await aws(
      's3api',
      'put-bucket-policy',
      '--bucket',
      bucket,
      '--policy',
      `file://${join(dir, 'policy.json')}`,
    );
    const stored = JSON.parse((await aws('s3api', 'get-bucket-policy', '--bucket', bucket)).stdout);
    expect(JSON.parse(stored.Policy)).toEqual(JSON.parse(policy));
    const status = JSON.parse((await aws('s3api', 'get-bucket-policy-status', '--bucket', bucket)).stdout);
    expect(status.PolicyStatus.IsPublic).toBe(true);
    expect(await curl(`/${bucket}/closed.txt`)).toEqual({ status: 200, body: 'hello' });
    // Over plain HTTP the Deny wins over the object's public-read ACL.
    expect((await curl(`/${bucket}/open.txt`)).status).toBe(403);
    await aws('s3api', 'delete-bucket-policy', '--bucket', bucket);
    expect((await curl(`/${bucket}/closed.txt`)).status).toBe(403);
    expect((await curl(`/${bucket}/open.txt`)).status).toBe(200);
  });
});
