import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { commandPath } from '../helpers/commands.js';
import { TestFjord } from '../helpers/fjord.js';
import { selfSigned } from '../helpers/https-receiver.js';

/**
 * FJORD_TLS_CERT and FJORD_TLS_KEY: the API and the S3 listener answer HTTPS, the addresses Fjord
 * hands out say https, and real clients (curl, aws-cli) trusting the certificate just work.
 */
const run = promisify(execFile);
let t: TestFjord;
let dir: string;
let certFile: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fjord-tls-'));
  const { cert, key } = selfSigned();
  certFile = join(dir, 'cert.pem');
  writeFileSync(certFile, cert);
  writeFileSync(join(dir, 'key.pem'), key, { mode: 0o600 });
  t = await TestFjord.create({
    FJORD_API_PORT: '0',
    FJORD_S3_PORT: '0',
    FJORD_TLS_CERT: certFile,
    FJORD_TLS_KEY: join(dir, 'key.pem'),
  });
  await t.fjord.start(['api', 's3']);
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('answers the API over HTTPS only, at the https address it reports', async () => {
  const base = t.kernel.baseUrl();
  expect(base).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  const { stdout } = await run('curl', ['-sS', '--cacert', certFile, `${base}/healthz`]);
  expect(JSON.parse(stdout)).toMatchObject({ status: 'ok' });
  // Plain HTTP to the same port gets no answer it could mistake for one.
  const plain = await run('curl', [
    '-sS',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code}',
    base.replace('https:', 'http:'),
  ]).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
  expect(plain.stdout).not.toBe('200');
  // An untrusted certificate is refused by the client, as it should be.
  await expect(run('curl', ['-sS', `${base}/healthz`])).rejects.toThrow();
});

it.runIf(commandPath('aws') !== null)('serves S3 over HTTPS to aws-cli given the CA bundle', async () => {
  const c = await t.customer();
  const bucket = await t.request('POST', '/v1/storage/buckets', {
    key: c.pat,
    body: { bucket_name: 'tls-bucket' },
  });
  expect(bucket.status, bucket.text).toBe(201);
  const endpoint = bucket.body.endpoint as string;
  expect(endpoint).toMatch(/^https:\/\//);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_ACCESS_KEY_ID: bucket.body.access_key,
    AWS_SECRET_ACCESS_KEY: bucket.body.secret_key,
    AWS_DEFAULT_REGION: 'eu-north-1',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_CONFIG_FILE: join(dir, 'none'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
  };
  delete env['AWS_PROFILE'];
  const file = join(dir, 'hello.txt');
  writeFileSync(file, 'over TLS');
  const aws = (...args: string[]) =>
    run('aws', ['--endpoint-url', endpoint, '--ca-bundle', certFile, ...args], { env });
  await aws('s3', 'cp', file, 's3://tls-bucket/hello.txt');
  await aws('s3', 'cp', 's3://tls-bucket/hello.txt', join(dir, 'back.txt'));
  expect(readFileSync(join(dir, 'back.txt'), 'utf8')).toBe('over TLS');
});
