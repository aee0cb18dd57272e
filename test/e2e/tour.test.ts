// docs/tour.md, run as written: its `sh` blocks in one bash, against a Fjord started as the
// tour says (every role, embedded defaults), with the tour's own tools.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { commandPath } from '../helpers/commands.js';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
// fjord-test: one store (sqlite). The tour starts its own Fjord on the embedded defaults
// whichever store the pass tests, so it runs once.
const tools = ['jq', 'aws', 'dig', 'psql'].every((t) => commandPath(t) !== null);
let fjord: ChildProcess | undefined;
let dataDir: string;

/** The environment of the tour's terminals: a data dir of the test's own, and free ports. */
const env = (): NodeJS.ProcessEnv => {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('FJORD_') && !k.startsWith('AWS_')) out[k] = v;
  return {
    ...out,
    FJORD_DATA_DIR: dataDir,
    FJORD_API_PORT: '0',
    FJORD_S3_PORT: '0',
    FJORD_DNS_PORT: '0',
    FJORD_MQTT_PORT: '0',
    FJORD_RTMP_PORT: '0',
    FJORD_LOG_LEVEL: 'warn',
    FJORD_EMULATOR: '1',
    AWS_CONFIG_FILE: join(dataDir, 'no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(dataDir, 'no-aws-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
  };
};

beforeAll(async () => {
  if (!tools) return;
  dataDir = mkdtempSync(join(tmpdir(), 'fjord-tour-'));
  fjord = spawn(process.execPath, [join(ROOT, 'bin', 'fjord.js'), 'start'], {
    cwd: ROOT,
    env: env(),
    stdio: 'pipe',
  });
  const banner = await new Promise<string>((resolve, reject) => {
    let out = '';
    fjord!.stdout!.on('data', (d) => {
      out += d;
      if (/Back ends/.test(out) && /dns\s+dns/.test(out)) resolve(out);
    });
    fjord!.once('exit', (code) => reject(new Error(`fjord exited ${code}: ${out}`)));
  });
  process.env['TOUR_DNS'] = /^\s*dns\s+dns \(udp\+tcp\) [\d.]+:(\d+)/m.exec(banner)?.[1] ?? '';
}, 60_000);
afterAll(async () => {
  if (fjord && fjord.exitCode === null) {
    fjord.kill('SIGTERM');
    await new Promise((r) => fjord!.once('exit', r));
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

// A dozen `npx fjord` processes in a row: on a loaded machine each takes seconds, so the
// timeout is generous (the tour itself needs no waiting).
it.runIf(tools)('runs docs/tour.md as written', { timeout: 300_000 }, async () => {
  const page = readFileSync(join(ROOT, 'docs', 'tour.md'), 'utf8');
  const blocks = [...page.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  expect(blocks.length).toBe(5);
  const script = `set -euo pipefail\n${blocks.join('\n')}`;
  const { stdout } = await run('bash', ['-c', script], {
    cwd: ROOT,
    env: { ...env(), FJORD_DNS_PORT: process.env['TOUR_DNS'] },
    maxBuffer: 1 << 24,
  });
  expect(stdout).toContain('hello from the tour'); // the object read back with aws-cli
  expect(stdout).toContain('192.0.2.10'); // dig's answer
  expect(stdout).toMatch(/count\s*\n-+\n\s*1\s*\n/); // psql's SELECT
  expect(stdout).toMatch(/^status\s+verified$/m); // the code checked
});
