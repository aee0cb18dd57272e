import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * The examples of `GET /storage/s3`, run as written with the real clients (Debian's aws-cli
 * 2.9, s3cmd, rclone, and the installed AWS SDK for JavaScript) after putting in a bucket's own
 * key and name: the guide must stay working, not just look right.
 */
const run = promisify(execFile);
let t: TestFjord;
let a: TestCustomer;
let dir: string;
let bucket: string;
let access: string;
let secret: string;
let examples: Record<string, string>;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  t = await TestFjord.create({ FJORD_S3_PORT: '0' });
  await t.fjord.start(['s3']);
  a = await t.customer();
  bucket = `guide-${Date.now().toString(36)}`;
  const made = await t.request('POST', '/v1/storage/buckets', { key: a.pat, body: { bucket_name: bucket } });
  access = made.body.access_key;
  secret = made.body.secret_key;
  const guide = await t.request('GET', '/storage/s3');
  examples = Object.fromEntries(
    guide.body.examples.map((e: { client: string; code: string }) => [e.client, fill(e.code)]),
  );
  dir = mkdtempSync(join(tmpdir(), 'fjord-guide-'));
  writeFileSync(join(dir, 'photo.jpg'), 'not really a jpeg');
  mkdirSync(join(dir, 'site'));
  writeFileSync(join(dir, 'site', 'index.html'), '<h1>hi</h1>');
  mkdirSync(join(dir, 'photos'));
  writeFileSync(join(dir, 'photos', 'a.jpg'), 'a');
  env = { ...process.env, HOME: dir, AWS_EC2_METADATA_DISABLED: 'true' };
  // A CA bundle in the environment makes rclone refuse plain-HTTP endpoints (PITFALLS.md).
  delete env['AWS_CA_BUNDLE'];
  delete env['AWS_PROFILE'];
  delete env['AWS_ACCESS_KEY_ID'];
  delete env['AWS_SECRET_ACCESS_KEY'];
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const fill = (code: string) =>
  code.replaceAll('<ACCESS_KEY>', access).replaceAll('<SECRET_KEY>', secret).replaceAll('my-bucket', bucket);

/** The text between a `# <file>` line and the next blank line. */
function section(code: string, file: string): string {
  const lines = code.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`# ${file}`));
  const end = lines.findIndex((l, i) => i > start && l === '');
  return `${lines.slice(start + 1, end).join('\n')}\n`;
}
/** Shell words of a command line (the guide's commands have no quoting). */
const words = (line: string) => line.replace(/^#\s*/, '').split(/\s+/).filter(Boolean);

describe('the S3 usage guide, run as written', () => {
  it('aws-cli: ls, cp, sync and a SigV4 presigned URL curl can fetch', async () => {
    const code = examples['aws-cli']!;
    mkdirSync(join(dir, '.aws'), { recursive: true });
    writeFileSync(join(dir, '.aws', 'credentials'), section(code, '~/.aws/credentials'));
    writeFileSync(join(dir, '.aws', 'config'), section(code, '~/.aws/config'));
    const commands = code.split('\n').filter((l) => l.startsWith('aws '));
    expect(commands).toHaveLength(4);
    let presigned = '';
    for (const line of commands) {
      const [, ...args] = words(line);
      const out = await run('/usr/bin/aws', args, { env, cwd: dir });
      if (line.includes(' presign ')) presigned = out.stdout.trim();
    }
    expect(presigned).toContain('X-Amz-Algorithm=AWS4-HMAC-SHA256');
    const fetched = await fetch(presigned);
    expect(fetched.status).toBe(200);
    expect(await fetched.text()).toBe('not really a jpeg');
    const listed = await run(
      '/usr/bin/aws',
      ['--profile', 'fjord', '--endpoint-url', endpointOf(code), 's3', 'ls', `s3://${bucket}/site/`],
      { env },
    );
    expect(listed.stdout).toContain('index.html');
  }, 60_000);

  it('s3cmd: ls, put and get with the ~/.s3cfg shown', async () => {
    const code = examples['s3cmd']!;
    writeFileSync(join(dir, '.s3cfg'), section(code, '~/.s3cfg'));
    for (const line of code.split('\n').filter((l) => l.startsWith('# s3cmd '))) {
      const [, ...args] = words(line);
      await run('s3cmd', args, { env, cwd: dir });
    }
    expect(readFileSync(join(dir, 'copy.jpg'), 'utf8')).toBe('not really a jpeg');
  }, 60_000);

  it('rclone: ls and copy with the remote shown', async () => {
    const code = examples['rclone']!;
    const conf = join(dir, 'rclone.conf');
    writeFileSync(conf, `${code.split('\n\n')[0]}\n`);
    for (const line of code.split('\n').filter((l) => l.startsWith('# rclone '))) {
      const [, ...args] = words(line);
      await run('rclone', ['--config', conf, ...args], { env, cwd: dir });
    }
    const out = await run('rclone', ['--config', conf, 'cat', `fjord:${bucket}/photos/a.jpg`], { env });
    expect(out.stdout).toBe('a');
  }, 60_000);

  it('AWS SDK for JavaScript: the module shown runs and prints what it stored', async () => {
    const code = examples['aws-sdk-js']!;
    const sdkDir = join(dir, 'sdk');
    mkdirSync(sdkDir);
    symlinkSync(resolve('node_modules'), join(sdkDir, 'node_modules'));
    writeFileSync(join(sdkDir, 'example.mjs'), code);
    const out = await run(process.execPath, ['example.mjs'], {
      cwd: sdkDir,
      env: { ...env, FJORD_S3_ACCESS_KEY: access, FJORD_S3_SECRET_KEY: secret },
    });
    expect(out.stdout.trim()).toBe('Hello');
  }, 60_000);
});

const endpointOf = (code: string) => /--endpoint-url (\S+)/.exec(code)![1]!;
