// The API commands of `fjord` (bucket, dns, db, op …) as a user runs them: a separate process
// against a running Fjord, with the exit codes scripts rely on.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReferenceWorker } from '../../src/areas/gpu/reference-worker.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

// fjord-test: one store (postgres). One pass runs it: the CLI's commands, output and exit codes are
// its subject; the API under them is tested on both stores in the integration tier.

const FJORD = join(import.meta.dirname, '..', '..', 'bin', 'fjord.js');
const run = promisify(execFile);
let t: TestFjord;
let c: TestCustomer;
let home: string;

beforeAll(async () => {
  t = await TestFjord.create({ FJORD_API_PORT: '0' });
  await t.fjord.start(['api']);
  c = await t.customer();
  home = mkdtempSync(join(tmpdir(), 'fjord-cli-home-'));
});
afterAll(async () => {
  await t.close();
  rmSync(home, { recursive: true, force: true });
});

/** `fjord …` with the environment given; resolves to stdout, stderr and the exit code. */
async function fjord(args: string[], env: Record<string, string> = {}) {
  const base: NodeJS.ProcessEnv = { PATH: process.env['PATH'], XDG_CONFIG_HOME: home, ...env };
  try {
    const { stdout, stderr } = await run(process.execPath, [FJORD, ...args], { env: base, cwd: home });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}
const as = () => ({ FJORD_URL: t.kernel.baseUrl(), FJORD_TOKEN: c.pat });

describe('fjord API commands', () => {
  it('creates, lists and deletes a bucket; a table by default, JSON with -o json', async () => {
    const made = await fjord(['bucket', 'create', 'cli-test-bucket', '-o', 'json'], as());
    expect(made.code, made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({
      bucket_name: 'cli-test-bucket',
      access_key: expect.any(String),
    });
    const list = await fjord(['bucket', 'list'], as());
    expect(list.stdout.split('\n')[0]).toMatch(/^BUCKET_NAME\s+/);
    expect(list.stdout).toContain('cli-test-bucket');
    expect((await fjord(['bucket', 'delete', 'cli-test-bucket'], as())).code).toBe(0);
    expect((await fjord(['bucket', 'list', '-o', 'json'], as())).stdout).not.toContain('cli-test-bucket');
  });

  it('makes a zone and a record with typed fields, and reads them back', async () => {
    expect((await fjord(['dns', 'zone', 'create', 'cli.example'], as())).code).toBe(0);
    const rec = await fjord(
      [
        'dns',
        'record',
        'create',
        'cli.example',
        '--record_type',
        'A',
        '--host',
        'www',
        '--record',
        '192.0.2.9',
        '--ttl',
        '600',
      ],
      as(),
    );
    expect(rec.code, rec.stderr).toBe(0);
    const records = JSON.parse(
      (await fjord(['dns', 'record', 'list', 'cli.example', '-o', 'json'], as())).stdout,
    );
    expect(JSON.stringify(records)).toContain('192.0.2.9');
  });

  it('exits 1 with the server’s message when refused, and 2 on a usage mistake', async () => {
    const missing = await fjord(['dns', 'zone', 'get', 'nope.example'], as());
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^fjord: 404 \w+: /);
    expect((await fjord(['bucket', 'frobnicate'], as())).code).toBe(2);
    expect((await fjord(['dns', 'record', 'create', 'cli.example', '--nonsense'], as())).code).toBe(2);
    const anonymous = await fjord(['account', 'profile'], { FJORD_URL: t.kernel.baseUrl() });
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toContain('401');
  });

  it('reaches every operation the server serves through `fjord op`', async () => {
    const listed = JSON.parse((await fjord(['op', 'list', '-o', 'json'], as())).stdout) as {
      operation: string;
    }[];
    const doc = (await t.request('GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const all = Object.values(doc.paths).flatMap((m) => Object.values(m).map((o) => o.operationId));
    expect(listed.map((o) => o.operation).sort()).toEqual(all.sort());
    const profile = await fjord(['op', 'getAccountProfile', '-o', 'json'], as());
    expect(JSON.parse(profile.stdout).email).toBe(c.email);
  });

  it('remembers a login, and --help does nothing else', async () => {
    const help = await fjord(['bucket', 'create', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('bucket create <bucket_name>');
    expect(existsSync(join(home, 'fjord', 'config.json'))).toBe(false);
    expect((await fjord(['login', '--url', t.kernel.baseUrl(), '--token', c.pat])).code).toBe(0);
    const saved = join(home, 'fjord', 'config.json');
    expect(JSON.parse(readFileSync(saved, 'utf8'))).toMatchObject({ url: t.kernel.baseUrl() });
    const profile = await fjord(['account', 'profile', '-o', 'json']);
    expect(JSON.parse(profile.stdout).email).toBe(c.email);
    expect((await fjord(['logout'])).stdout).toContain('logged out');
  });

  it('waits for a job to finish with --wait', async () => {
    const worker = await t.operator('POST', '/admin/v1/gpu/workers', {
      name: 'cli',
      engines: ['reference-image'],
    });
    const served = runReferenceWorker({
      baseUrl: t.kernel.baseUrl(),
      token: worker.body.token,
      maxJobs: 1,
      pollSeconds: 0.05,
    });
    const job = await fjord(
      [
        'gpu',
        'job',
        'create',
        '--type',
        'image',
        '--engine',
        'reference-image',
        '--inputs',
        '{"prompt":"cli"}',
        '--wait',
        '-o',
        'json',
      ],
      { ...as(), FJORD_TOKEN: (await t.kernel.identity.createServiceKey(c.id, 'gpu', 'cli')).key },
    );
    expect(job.code, job.stderr).toBe(0);
    expect(JSON.parse(job.stdout)).toMatchObject({
      status: 'completed',
      output_files: { image: expect.any(String) },
    });
    expect(await served).toBe(1);
  });

  it('completes command words in bash', async () => {
    const script = (await fjord(['completion'])).stdout;
    const complete = async (...words: string[]) => {
      const { stdout } = await run('bash', [
        '-c',
        `${script}\nCOMP_WORDS=(fjord ${words.join(' ')}); COMP_CWORD=${words.length}; _fjord; echo "\${COMPREPLY[*]}"`,
      ]);
      return stdout.trim();
    };
    expect(await complete('dns', 'z')).toBe('zone');
    expect(await complete('bucket', '')).toContain('create');
  });
});
