import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S3ClientsFixture, s3ClientsFixture } from '../helpers/s3-clients.js';

// fjord-test: one store (postgres). One pass runs it: the S3 clients (their signing, multipart and
// bytes) are its subject; the object store's state is tested on both stores in the integration
// tier.

/**
 * The S3 data plane driven by the command-line clients people use: Debian's aws-cli 2.9,
 * s3cmd and rclone. Each uploads and downloads 0 B, 1 B, 5 MiB + 1 B and 20 MiB + 1 B (multipart
 * in every client: past aws-cli's and rclone's 8 MiB and s3cmd's 15 MiB parts, with a short last
 * part) and must get the same bytes back.
 */
const run = promisify(execFile);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const LARGE = 20 * 1024 * 1024 + 1;
const SIZES = [0, 1, 5 * 1024 * 1024 + 1, LARGE];

let endpoint: string;
let bucket: string;
let dir: string;
let env: NodeJS.ProcessEnv;
let keys: { access: string; secret: string };
const files: { name: string; data: Buffer; path: string }[] = [];

let s3: S3ClientsFixture;
beforeAll(async () => {
  s3 = await s3ClientsFixture('clients');
  ({ endpoint, bucket, dir, keys } = s3);
  for (const size of SIZES) {
    const data = randomBytes(size);
    const path = join(dir, `f-${size}.bin`);
    writeFileSync(path, data);
    files.push({ name: `f-${size}.bin`, data, path });
  }
  env = {
    ...s3.env,
    RCLONE_CONFIG_FJ_TYPE: 's3',
    RCLONE_CONFIG_FJ_PROVIDER: 'Other',
    RCLONE_CONFIG_FJ_ACCESS_KEY_ID: keys.access,
    RCLONE_CONFIG_FJ_SECRET_ACCESS_KEY: keys.secret,
    RCLONE_CONFIG_FJ_ENDPOINT: endpoint,
    RCLONE_CONFIG_FJ_REGION: 'eu-north-1',
    RCLONE_CONFIG_FJ_FORCE_PATH_STYLE: 'true',
    RCLONE_CONFIG: join(dir, 'rclone.conf'),
  };
});
afterAll(() => s3?.close());

const aws = (...args: string[]) =>
  run('/usr/bin/aws', ['--endpoint-url', endpoint, ...args], { env, maxBuffer: 1 << 26 });
const s3cmd = (...args: string[]) =>
  run('s3cmd', ['-c', join(dir, 's3cfg'), ...args], { env, maxBuffer: 1 << 26 });
const rclone = (...args: string[]) =>
  run('rclone', ['--s3-upload-cutoff', '8M', '--s3-chunk-size', '8M', ...args], { env, maxBuffer: 1 << 26 });

describe('aws-cli', () => {
  it('cp up and down the same bytes, ls, sync, rm', async () => {
    for (const f of files) {
      await aws('s3', 'cp', f.path, `s3://${bucket}/aws/${f.name}`);
      const out = join(dir, `aws-back-${f.name}`);
      await aws('s3', 'cp', `s3://${bucket}/aws/${f.name}`, out);
      expect(sha(readFileSync(out))).toBe(sha(f.data));
    }
    const ls = await aws('s3', 'ls', `s3://${bucket}/aws/`);
    for (const f of files) expect(ls.stdout).toContain(f.name);
    const head = JSON.parse(
      (await aws('s3api', 'head-object', '--bucket', bucket, '--key', `aws/f-${LARGE}.bin`)).stdout,
    );
    expect(head.ETag).toMatch(/^"[0-9a-f]{32}-\d+"$/);
    const syncDir = join(dir, 'sync');
    mkdirSync(join(syncDir, 'sub'), { recursive: true });
    writeFileSync(join(syncDir, 'one.txt'), 'one');
    writeFileSync(join(syncDir, 'sub', 'two.txt'), 'two');
    await aws('s3', 'sync', syncDir, `s3://${bucket}/sync/`);
    const listed = await aws('s3', 'ls', '--recursive', `s3://${bucket}/sync/`);
    expect(listed.stdout).toContain('sync/sub/two.txt');
    await aws('s3', 'rm', '--recursive', `s3://${bucket}/sync/`);
    expect((await aws('s3', 'ls', `s3://${bucket}/sync/`).catch((e) => e)).stdout ?? '').toBe('');
  }, 120_000);

  it('presigns a URL that curl can fetch', async () => {
    const { stdout } = await aws('s3', 'presign', `s3://${bucket}/aws/f-1.bin`, '--expires-in', '300');
    const url = stdout.trim();
    expect(url).toContain('X-Amz-Signature=');
    const got = await run('curl', ['-sf', '-o', join(dir, 'curl.bin'), url], { env });
    expect(got.stderr).toBe('');
    expect(sha(readFileSync(join(dir, 'curl.bin')))).toBe(sha(files[1]!.data));
  });
});

describe('aws-cli s3api with checksums', () => {
  it('uploads parts with SHA256 and gets the composite checksum back, checked by Fjord', async () => {
    const json = async (...args: string[]) => JSON.parse((await aws('s3api', ...args)).stdout || '{}');
    const key = 'aws/checksummed.bin';
    const parts = [files[2]!, files[1]!]; // 5 MiB + 1 B, then 1 B
    const created = await json(
      'create-multipart-upload',
      '--bucket',
      bucket,
      '--key',
      key,
      '--checksum-algorithm',
      'SHA256',
    );
    expect(created.ChecksumAlgorithm).toBe('SHA256');
    const listed = [];
    for (const [i, f] of parts.entries()) {
      const part = await json(
        'upload-part',
        ...['--bucket', bucket, '--key', key, '--upload-id', created.UploadId],
        ...['--part-number', String(i + 1), '--body', f.path, '--checksum-algorithm', 'SHA256'],
      );
      const own = createHash('sha256').update(f.data).digest('base64');
      expect(part.ChecksumSHA256).toBe(own);
      listed.push({ PartNumber: i + 1, ETag: part.ETag, ChecksumSHA256: own });
    }
    const doc = join(dir, 'parts.json');
    writeFileSync(doc, JSON.stringify({ Parts: listed }));
    const complete = (file: string) =>
      json(
        'complete-multipart-upload',
        ...['--bucket', bucket, '--key', key, '--upload-id', created.UploadId],
        ...['--multipart-upload', `file://${file}`],
      );
    // A part checksum that is not the part's is refused, and the upload stays.
    const wrong = join(dir, 'wrong-parts.json');
    writeFileSync(
      wrong,
      JSON.stringify({ Parts: [listed[0], { ...listed[1], ChecksumSHA256: listed[0]!.ChecksumSHA256 }] }),
    );
    const refused = await complete(wrong).catch((e: { stderr: string }) => e.stderr);
    expect(refused).toContain('InvalidPart');
    const done = await complete(doc);
    const composite = createHash('sha256')
      .update(Buffer.concat(listed.map((p) => Buffer.from(p.ChecksumSHA256, 'base64'))))
      .digest('base64');
    expect(done.ChecksumSHA256).toBe(`${composite}-2`);
    const head = await json('head-object', '--bucket', bucket, '--key', key, '--checksum-mode', 'ENABLED');
    expect(head.ChecksumSHA256).toBe(`${composite}-2`);
  }, 60_000);
});

describe('s3cmd', () => {
  it('put and get the same bytes, ls, del', async () => {
    for (const f of files) {
      await s3cmd('put', f.path, `s3://${bucket}/s3cmd/${f.name}`);
      const out = join(dir, `s3cmd-back-${f.name}`);
      await s3cmd('get', '--force', `s3://${bucket}/s3cmd/${f.name}`, out);
      expect(sha(readFileSync(out))).toBe(sha(f.data));
    }
    const ls = await s3cmd('ls', `s3://${bucket}/s3cmd/`);
    expect(ls.stdout).toContain('f-1.bin');
    await s3cmd('del', `s3://${bucket}/s3cmd/f-1.bin`);
    expect((await s3cmd('ls', `s3://${bucket}/s3cmd/`)).stdout).not.toContain('f-1.bin');
  }, 120_000);
});

describe('rclone', () => {
  it('copyto and cat the same bytes, ls, delete', async () => {
    for (const f of files) {
      await rclone('copyto', f.path, `fj:${bucket}/rclone/${f.name}`);
      const out = join(dir, `rclone-back-${f.name}`);
      await rclone('copyto', `fj:${bucket}/rclone/${f.name}`, out);
      expect(sha(readFileSync(out))).toBe(sha(f.data));
    }
    const ls = await rclone('ls', `fj:${bucket}/rclone`);
    expect(ls.stdout).toContain('f-1.bin');
    await rclone('delete', `fj:${bucket}/rclone`);
    expect((await rclone('ls', `fj:${bucket}/rclone`)).stdout).toBe('');
  }, 120_000);
});

describe('curl --aws-sigv4', () => {
  it('signs UTF-8 metadata as bytes, and the value comes back byte for byte', async () => {
    const curl = (...args: string[]) =>
      run(
        'curl',
        ['-s', '--aws-sigv4', 'aws:amz:eu-north-1:s3', '--user', `${keys.access}:${keys.secret}`, ...args],
        {
          env,
        },
      );
    const url = `${endpoint}/${bucket}/curl/unicode`;
    for (const value of ['plain', 'Ünïcödé', '日本語']) {
      const put = await curl(
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '-X',
        'PUT',
        '-H',
        `x-amz-meta-name: ${value}`,
        '-H',
        'x-amz-content-sha256: UNSIGNED-PAYLOAD',
        '--data-binary',
        'x',
        url,
      );
      expect(put.stdout, value).toBe('200');
      const head = await run(
        'curl',
        [
          '-s',
          '-D',
          '-',
          '-o',
          '/dev/null',
          '--aws-sigv4',
          'aws:amz:eu-north-1:s3',
          '--user',
          `${keys.access}:${keys.secret}`,
          '-H',
          'x-amz-content-sha256: UNSIGNED-PAYLOAD',
          url,
        ],
        { env, encoding: 'buffer' },
      );
      expect(head.stdout.includes(Buffer.from(`x-amz-meta-name: ${value}\r\n`)), value).toBe(true);
    }
  });
});
