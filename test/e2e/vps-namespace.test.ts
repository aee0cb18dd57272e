import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planOf } from '../../src/areas/vps/catalogue.js';
import { TemplateCache } from '../../src/areas/vps/drivers/namespace/template.js';
import { NamespaceVpsDriver } from '../../src/areas/vps/drivers/namespace.js';
import type { VpsService } from '../../src/areas/vps/service.js';
import { serviceOf } from '../../src/areas/wiring.js';
import { eventually } from '../helpers/eventually.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

// fjord-test: one store (sqlite). One pass runs it: the namespace driver on the host is its
// subject; the VPS area's state is tested on both stores in the integration tier.

/**
 * Virtual servers with the namespace driver: a real Debian server the customer logs in to with
 * `ssh` and a key made by `ssh-keygen`; a snapshot and a rollback, and a backup and a restore,
 * that really put the disk back; delete leaves no mount, network namespace or process. The Debian root is built once per run
 * (debootstrap, ~40 s) in a fixed directory under the system's temporary dir, shared by both
 * stores' runs. Skipped, with the reason, where namespaces or overlayfs cannot be made.
 */
const TEMPLATES = join(tmpdir(), 'fjord-vps-templates');

function namespaceUsable(): string | null {
  if (process.getuid?.() !== 0) return 'not root: namespaces, overlayfs and veths need root';
  for (const [bin, pkg] of [
    ['debootstrap', 'debootstrap'],
    ['ssh', 'openssh-client'],
  ] as const)
    try {
      execFileSync('sh', ['-c', `command -v ${bin}`], { stdio: 'pipe' });
    } catch {
      return `${bin} is not installed (Debian: apt-get install ${pkg})`;
    }
  try {
    execFileSync('unshare', ['--mount', '--uts', '--pid', '--net', '--fork', 'true'], { stdio: 'pipe' });
  } catch (err) {
    return `cannot make namespaces: ${(err as Error).message}`;
  }
  const dir = mkdtempSync(join(tmpdir(), 'fjord-overlay-check-'));
  try {
    execFileSync(
      'sh',
      [
        '-c',
        `mkdir l u w m && unshare --mount mount -t overlay overlay -o lowerdir=l,upperdir=u,workdir=w m`,
      ],
      {
        cwd: dir,
        stdio: 'pipe',
      },
    );
  } catch (err) {
    return `cannot mount overlayfs: ${(err as Error).message}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return null;
}
const skipReason = namespaceUsable();
if (skipReason) console.warn(`vps namespace tier skipped: ${skipReason}`);

const exec = promisify(execFile);
let t: TestFjord;
let a: TestCustomer;
let keyDir: string;

/** Async on purpose: the SSH forward runs in this process, which must keep serving meanwhile. */
async function ssh(address: string, command: string, key = 'id'): Promise<string> {
  const { stdout } = await exec(
    'ssh',
    [
      '-i',
      join(keyDir, key),
      '-o',
      'BatchMode=yes',
      '-o',
      'StrictHostKeyChecking=no',
      '-o',
      'UserKnownHostsFile=/dev/null',
      '-o',
      'LogLevel=ERROR',
      '-o',
      'ConnectTimeout=10',
      `root@${address}`,
      command,
    ],
    { encoding: 'utf8' },
  );
  return stdout;
}

/** Whether anything of the server is left on the host: mounts, loop devices, network namespace, processes, cgroups. */
function leftovers(id: string): string[] {
  const out: string[] = [];
  const marker = `fjord-vps-${id}`;
  if (existsSync(`/run/netns/${marker}`)) out.push('network namespace');
  if (readFileSync('/proc/mounts', 'utf8').includes(id)) out.push('mount');
  const ps = execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' });
  if (ps.split('\n').some((l) => l.includes(marker))) out.push('process');
  if (existsSync(`/sys/fs/cgroup/memory/fjord-vps/${id}`)) out.push('cgroup');
  if (execFileSync('losetup', ['-a'], { encoding: 'utf8' }).includes(id)) out.push('loop device');
  return out;
}

const waitFor = (id: string, status: string, withinMs = 60_000) =>
  eventually(async () => {
    const r = await t.request('GET', `/v1/vps/${id}`, { key: a.pat });
    if (r.body.status !== status) throw new Error(`server is ${r.body.status}, not ${status}`);
    return r.body;
  }, withinMs);

describe.skipIf(skipReason !== null)('virtual servers (namespace driver)', () => {
  beforeAll(async () => {
    keyDir = mkdtempSync(join(tmpdir(), 'fjord-vps-key-'));
    for (const name of ['id', 'other'])
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', join(keyDir, name)]);
    t = await TestFjord.create({
      FJORD_VPS_DRIVER: 'namespace',
      FJORD_VPS_TEMPLATE_DIR: TEMPLATES,
      FJORD_RATE_LIMITS: JSON.stringify({ vps: { points: 10_000, duration: 60 } }),
    });
    a = await t.customer();
  });
  afterAll(async () => {
    // Whatever a failed test left running goes with the data dir.
    await (serviceOf(t.fjord.areas, 'vps') as VpsService | undefined)?.driver.destroyAll?.();
    await t?.close();
    rmSync(keyDir, { recursive: true, force: true });
  });

  it('offers the Debian templates only', async () => {
    const templates = (await t.request('GET', '/v1/vps/os-templates')).body as {
      id: string;
      available: boolean;
    }[];
    expect(templates.filter((x) => x.available).map((x) => x.id)).toEqual(['debian-12', 'debian-11']);
    const r = await t.request('POST', '/v1/vps', {
      key: a.pat,
      body: {
        hostname: 'win.example.test',
        plan_code: 'vps-1-2',
        region: 'oslo',
        os_template: 'windows-2022',
      },
    });
    expect(r.status).toBeGreaterThanOrEqual(400);
  });

  it('runs a server the customer logs in to with ssh; snapshots and rollback put the disk back; delete leaves nothing', async () => {
    const publicKey = readFileSync(join(keyDir, 'id.pub'), 'utf8').trim();
    const created = await t.request('POST', '/v1/vps', {
      key: a.pat,
      body: {
        hostname: 'web1.example.test',
        plan_code: 'vps-1-2',
        region: 'oslo',
        os_template: 'debian-12',
        ssh_keys: [publicKey],
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('provisioning');
    const id = created.body.id as string;
    const address = created.body.ipv4 as string;
    expect(address).toMatch(/^127\.213\.\d+\.\d+$/);
    // The first run builds the Debian root (debootstrap); later ones find it cached.
    await waitFor(id, 'running', 600_000);

    expect((await ssh(address, 'hostname; id -u; cat /etc/debian_version; umask')).split('\n')).toEqual([
      'web1.example.test',
      '0',
      expect.stringMatching(/^12\./),
      // A Debian machine's, not Fjord's own 077 (which guards its data dir): a file the customer
      // makes is readable by the server's other users, and dpkg-deb accepts a package tree.
      '0022',
      '',
    ]);
    // Another customer's key does not open it.
    await expect(ssh(address, 'true', 'other')).rejects.toThrow(/Permission denied/);
    // The plan's limits are the server's cgroup's (vps-1-2: 2 GiB, one CPU's worth, 1024 processes).
    const cgroup = (controller: string, file: string) =>
      readFileSync(`/sys/fs/cgroup/${controller}/fjord-vps/${id}/${file}`, 'utf8').trim();
    if (existsSync('/sys/fs/cgroup/memory/fjord-vps')) {
      expect(cgroup('memory', 'memory.limit_in_bytes')).toBe(String(2 * 1024 ** 3));
      expect(cgroup('cpu', 'cpu.cfs_quota_us')).toBe('100000');
      expect(cgroup('pids', 'pids.max')).toBe('1024');
    }
    // Usage figures are measured: work in the server shows.
    await t.request('GET', `/v1/vps/${id}/status`, { key: a.pat });
    await ssh(address, 'timeout 0.5 sh -c "while :; do :; done" || true');
    const status = await t.request('GET', `/v1/vps/${id}/status`, { key: a.pat });
    expect(status.body).toMatchObject({ status: 'running' });
    expect(status.body.cpu_usage_percent).toBeGreaterThan(0);
    expect(status.body.memory_usage_percent).toBeGreaterThan(0);
    expect(status.body.network_in_bytes).toBeGreaterThan(0);
    expect(status.body.network_out_bytes).toBeGreaterThan(0);

    await ssh(address, 'echo before > /root/note.txt');
    expect((await t.request('POST', `/v1/vps/${id}/stop`, { key: a.pat })).status).toBe(200);
    await waitFor(id, 'stopped');
    const snap = await t.request('POST', `/v1/vps/${id}/snapshots`, { key: a.pat, body: { name: 'before' } });
    expect(snap.status).toBe(201);
    const list = await t.request('GET', `/v1/vps/${id}/snapshots`, { key: a.pat });
    expect(list.body.snapshots[0].size_bytes).toBeGreaterThan(1000);

    await t.request('POST', `/v1/vps/${id}/start`, { key: a.pat });
    await waitFor(id, 'running');
    await ssh(address, 'echo after > /root/note.txt; echo new > /root/new.txt');
    await t.request('POST', `/v1/vps/${id}/stop`, { key: a.pat });
    await waitFor(id, 'stopped');
    const rolled = await t.request('POST', `/v1/vps/${id}/snapshots/before/rollback`, { key: a.pat });
    expect(rolled.body.status).toBe('rolling_back');
    await t.request('POST', `/v1/vps/${id}/start`, { key: a.pat });
    await waitFor(id, 'running');
    expect(await ssh(address, 'cat /root/note.txt; ls /root')).toBe('before\nnote.txt\n');

    // A backup taken while running, restored after the disk changed, puts the disk back too.
    const backup = await t.request('POST', `/v1/vps/${id}/backups`, { key: a.pat });
    expect(backup.status).toBe(201);
    expect(backup.body).toMatchObject({ status: 'available' });
    await ssh(address, 'echo later > /root/note.txt');
    await t.request('POST', `/v1/vps/${id}/stop`, { key: a.pat });
    await waitFor(id, 'stopped');
    const restored = await t.request('POST', `/v1/vps/${id}/backups/${backup.body.id}/restore`, {
      key: a.pat,
    });
    expect(restored.body).toMatchObject({ status: 'restored' });
    await t.request('POST', `/v1/vps/${id}/start`, { key: a.pat });
    await waitFor(id, 'running');
    expect(await ssh(address, 'cat /root/note.txt')).toBe('before\n');

    expect(leftovers(id)).toEqual(expect.arrayContaining(['network namespace', 'process', 'cgroup']));
    expect((await t.request('DELETE', `/v1/vps/${id}`, { key: a.pat })).status).toBe(200);
    expect(leftovers(id)).toEqual([]);
  }, 900_000);
  it('a new Fjord adopts a server a previous one left running, and removes one the database does not know', async () => {
    const root = mkdtempSync(join(tmpdir(), 'fjord-vps-recover-'));
    const log = pino({ level: 'silent' });
    const templates = new TemplateCache(TEMPLATES);
    const spec = {
      id: `recover-${process.pid}`,
      customerId: 'cust-recover',
      hostname: 'left.example.test',
      plan: planOf('vps-1-2')!,
      osTemplate: 'debian-12',
      publicKeys: [readFileSync(join(keyDir, 'id.pub'), 'utf8').trim()],
    };
    try {
      const first = new NamespaceVpsDriver(root, templates, log, 'leave');
      const made = await first.provision(spec);
      await made.ready;
      const pid = readFileSync(join(root, spec.id, 'pid'), 'utf8');
      // `leave`: the server runs on and the relay closes, as when Fjord is killed.
      await first.shutdown();
      expect(leftovers(spec.id)).toContain('process');

      const second = new NamespaceVpsDriver(root, templates, log, 'leave');
      await second.recover([{ spec, up: true }]);
      expect(readFileSync(join(root, spec.id, 'pid'), 'utf8')).toBe(pid);
      expect(await ssh(made.ipv4, 'hostname')).toBe('left.example.test\n');

      await second.recover([]);
      expect(leftovers(spec.id)).toEqual([]);
      expect(existsSync(join(root, spec.id))).toBe(false);
    } finally {
      await new NamespaceVpsDriver(root, templates, log).destroyAll();
      rmSync(root, { recursive: true, force: true });
    }
  }, 300_000);
});
