// The named commands of every area as a user runs them: the shipped `fjord` process against a
// running Fjord, reading what it prints (tables that keep every field, --help per command,
// -o yaml, --wait's progress lines) and the multi-step commands (speech transcribe, llm chat,
// apps logs --follow, vps ssh, k8s kubeconfig).
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { commandPath } from '../helpers/commands.js';
import { eventually } from '../helpers/eventually.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { clipDir, speak } from '../helpers/speech.js';

// fjord-test: one store (sqlite). One pass runs it: the CLI's commands, output and exit codes are
// its subject; the API under them is tested on both stores in the integration tier.

const FJORD = join(import.meta.dirname, '..', '..', 'bin', 'fjord.js');
let t: TestFjord;
let c: TestCustomer;
let home: string;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  t = await TestFjord.create({ FJORD_API_PORT: '0', FJORD_S3_PORT: '0' });
  await t.fjord.start(['api', 's3', 'worker']);
  c = await t.customer();
  home = mkdtempSync(join(tmpdir(), 'fjord-cli-commands-'));
  // The first run builds the bundle when a source is newer: keep that out of the tests' time.
  expect((await fjord(['--version'])).code).toBe(0);
}, 120_000);
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await t.close();
  rmSync(home, { recursive: true, force: true });
});

interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  done: Promise<number | null>;
}

/** Starts `fjord …` (stdin empty, stdout and stderr pipes: not a terminal). */
function start(args: string[], env: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, [FJORD, ...args], {
    cwd: home,
    env: {
      PATH: process.env['PATH'],
      XDG_CONFIG_HOME: home,
      FJORD_URL: t.kernel.baseUrl(),
      FJORD_TOKEN: c.pat,
      ...env,
    },
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  child.stdin!.end();
  const done = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

async function fjord(args: string[], env: Record<string, string> = {}) {
  const r = start(args, env);
  const code = await r.done;
  return { code, stdout: r.stdout(), stderr: r.stderr() };
}

/** The value on a `field  value` line of a table. */
const field = (table: string, name: string) => new RegExp(`^\\s*${name}\\s+(\\S.*)$`, 'm').exec(table)?.[1];

describe('fjord named commands', { timeout: 90_000 }, () => {
  it('prints a new device’s one-time MQTT password, by name and through op', async () => {
    const named = await fjord(['iot', 'device', 'create', 'cli-sensor']);
    expect(named.code, named.stderr).toBe(0);
    expect(named.stdout).toMatch(/^mqtt_credentials:$/m);
    expect(field(named.stdout, 'password')).toMatch(/\S{8,}/);
    const op = await fjord(['op', 'iotCreateDevice', '--name', 'x']);
    expect(op.code, op.stderr).toBe(0);
    expect(field(op.stdout, 'password')).toMatch(/\S{8,}/);
    const id = field(named.stdout, 'device_id')!;
    const telemetry = await fjord(['iot', 'telemetry', id, '-o', 'yaml']);
    expect(telemetry.code, telemetry.stderr).toBe(0);
    expect(parseYaml(telemetry.stdout)).toEqual(expect.any(Object));
    const list = parseYaml((await fjord(['iot', 'device', 'list', '-o', 'yaml'])).stdout);
    expect(JSON.stringify(list)).toContain('cli-sensor');
  });

  it('describes each command’s fields in --help, and names a missing one', async () => {
    const help = await fjord(['bucket', 'key', 'create', '--help'], { FJORD_URL: '' });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: fjord bucket key create <bucket_name>');
    expect(help.stdout).toMatch(/^\s+--name\s+string\s+required/m);
    const other = await fjord(['live', 'event', 'create', '--help']);
    expect(other.stdout).not.toBe(help.stdout);
    expect(other.stdout).toContain('Example:\n  fjord live event create');
    const group = await fjord(['iot', '--help']);
    expect(group.stdout).toContain('fjord iot device create <name>');
    const missing = await fjord(['bucket', 'key', 'create', 'some-bucket']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--name');
  });

  it('--wait shows a cluster’s provisioning steps on plain lines, each once, until it runs', async () => {
    const run = start([
      'k8s',
      'cluster',
      'create',
      '--name',
      'cli-wait',
      '--node_pools',
      '[{"name":"default","plan_code":"k8s-node-s","count":1}]',
      '--wait',
      '-o',
      'json',
    ]);
    await eventually(async () => expect(run.stderr()).toContain('provisioning · validate'), 30_000);
    await t.advance(5);
    await eventually(async () => expect(run.stderr()).toContain('provisioning · network'), 30_000);
    await t.advance(300);
    expect(await run.done, run.stderr()).toBe(0);
    const cluster = JSON.parse(run.stdout()) as { id: string; status: string };
    expect(cluster.status).toBe('running');
    const lines = run.stderr().trim().split('\n');
    expect(lines.at(-1)).toBe('running');
    expect(lines.slice(0, 2)).toEqual(['provisioning · validate', 'provisioning · network']);
    expect(new Set(lines).size).toBe(lines.length);
    // The kubeconfig is YAML on stdout, for `> file`.
    const kubeconfig = await fjord(['k8s', 'kubeconfig', cluster.id]);
    expect(kubeconfig.code, kubeconfig.stderr).toBe(0);
    expect(parseYaml(kubeconfig.stdout)).toMatchObject({ kind: 'Config' });
    const get = await fjord(['k8s', 'cluster', 'get', cluster.id]);
    expect(field(get.stdout, 'status')).toBe('running');
    expect(get.stdout).toMatch(/^node_pools \(1\):$/m);
  });

  it('chats with a model and prints its answer', async () => {
    const chat = await fjord(['llm', 'chat', 'Say', 'hello']);
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout.trim().length).toBeGreaterThan(0);
    const json = JSON.parse((await fjord(['llm', 'chat', 'hi', '-o', 'json'])).stdout);
    expect(json.choices[0].message.role).toBe('assistant');
  });

  it('follows an app’s log until its instance stops', async () => {
    expect(
      (
        await fjord([
          'apps',
          'create',
          'cli-logs',
          '--image',
          // A registry on the operator's default list (FJORD_APPS_IMAGE_REGISTRIES).
          'ghcr.io/example/web:1',
          '--idle_timeout_seconds',
          '60',
        ])
      ).code,
    ).toBe(0);
    const follow = start(['apps', 'logs', 'cli-logs', '--follow']);
    await t.advance(10);
    await eventually(async () => expect(follow.stdout()).toContain('health check GET / passed'), 30_000);
    await t.advance(61);
    expect(await follow.done).toBe(0);
    expect(follow.stdout()).toMatch(/^\S+ \S+ stdout \[simulated\] pulling ghcr.io\/example\/web:1$/m);
  });

  it('runs ssh to a server’s address as root', async () => {
    const made = await fjord([
      'vps',
      'create',
      '--hostname',
      'cli-ssh',
      '--plan_code',
      'vps-1-2',
      '--region',
      'oslo',
      '--os_template',
      'debian-12',
      '-o',
      'json',
    ]);
    expect(made.code, made.stderr).toBe(0);
    const vps = JSON.parse(made.stdout) as { id: string };
    await t.advance(600);
    // A stand-in ssh on PATH records how it was called.
    const bin = join(home, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'ssh'), `#!/bin/sh\necho "$@" > "${join(home, 'ssh-args')}"\n`);
    chmodSync(join(bin, 'ssh'), 0o755);
    const ssh = await fjord(['vps', 'ssh', vps.id, '--', 'uptime'], {
      PATH: `${bin}:${process.env['PATH']}`,
    });
    expect(ssh.code, ssh.stderr).toBe(0);
    const address = (await t.request('GET', `/v1/vps/${vps.id}`, { key: c.pat })).body.ipv4_address;
    expect(readFileSync(join(home, 'ssh-args'), 'utf8').trim()).toBe(`root@${address} uptime`);
  });

  const speech = ['flite', 'pocketsphinx_continuous', 'ffmpeg'].every((p) => commandPath(p) !== null);
  it.runIf(speech)(
    'transcribes a file: uploads it, waits and prints the timed text',
    { timeout: 120_000 },
    async () => {
      const dir = clipDir();
      try {
        const file = speak(dir, 'the quick brown fox jumps over the lazy dog', 'wav');
        const r = await fjord(['speech', 'transcribe', file]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toMatch(/^status\s+ready$/m);
        expect(r.stdout).toMatch(/^\[\d+\.\d\d-\d+\.\d\d\] .*(fox|dog)/m);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
