// Virtual servers (namespace driver): time from `POST /v1/vps` to a successful `ssh` login (p50
// over N servers, warm template cache) and the memory of an idle server, against the same Debian
// root started bare in the same run: `ssh-keygen -A`, a netns with a veth, `unshare` with the same
// init (overlay, proc, devpts, sshd), then `ssh` — what an operator would script by hand.
//
//   npx tsx bench/vps.bench.ts [-- --servers 10]     (root, overlayfs, debootstrap)
//
// The two sides alternate server by server, so machine load hits both alike. Memory is the
// server's memory cgroup (`memory.usage_in_bytes`, page cache it touched included) 1 s after login.
import { execFile, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { planOf } from '../src/areas/vps/catalogue.js';
import {
  addressesOf,
  cgroupDirs,
  childrenOf,
  makeCgroups,
  makeNetwork,
  netnsOf,
  removeCgroups,
  removeNetwork,
  sleep,
} from '../src/areas/vps/drivers/namespace/host.js';
import {
  grantPool,
  ID_COUNT,
  idBaseOf,
  releaseIdRange,
  reserveIdRange,
  shiftOwnership,
} from '../src/areas/vps/drivers/namespace/idmaps.js';
import { MOUNT_SCRATCH, STAGE0_SCRIPT, STAGE1_SCRIPT } from '../src/areas/vps/drivers/namespace/init.js';
import { LAUNCH_HELPER, PYTHON } from '../src/areas/vps/drivers/namespace/launch-helper.js';
import { TemplateCache } from '../src/areas/vps/drivers/namespace/template.js';
import type { VpsService } from '../src/areas/vps/service.js';
import { TestFjord } from '../test/helpers/fjord.js';

const { values: args } = parseArgs({ options: { servers: { type: 'string', default: '10' } } });
const N = Number(args.servers);
const TEMPLATES = join(tmpdir(), 'fjord-vps-templates');
const exec = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'fjord-vps-bench-'));
await exec('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(work, 'id')]);
const publicKey = readFileSync(join(work, 'id.pub'), 'utf8').trim();

const pct = (v: number[], p: number) =>
  [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor((p / 100) * v.length))]!;

/** Tries `ssh … true` until it succeeds; answers when it did. */
async function sshUntilIn(address: string): Promise<number> {
  for (;;) {
    try {
      await exec('ssh', [
        '-i',
        join(work, 'id'),
        '-o',
        'BatchMode=yes',
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        'LogLevel=ERROR',
        '-o',
        'ConnectTimeout=5',
        `root@${address}`,
        'true',
      ]);
      return performance.now();
    } catch {
      await sleep(20);
    }
  }
}

const memoryOf = async (id: string) =>
  Number(
    (
      await readFile(join('/sys/fs/cgroup/memory/fjord-vps', id, 'memory.usage_in_bytes'), 'utf8').catch(
        () => '0',
      )
    ).trim(),
  );

const templates = new TemplateCache(TEMPLATES);
console.log('template: building or checking debian-12 …');
const lower = await templates.ensure('debian-12');

/**
 * The bare reference: the same root and the same two-stage init (idmapped template, user
 * namespace with an id range, pivot_root), no Fjord, no seccomp filter and no lxcfs.
 */
async function bare(i: number): Promise<{ ms: number; memory: number; stop: () => Promise<void> }> {
  const id = `bench-bare-${process.pid}-${i}`;
  const slot = 16_000 + i;
  const dir = join(work, id);
  const t0 = performance.now();
  for (const d of ['upper/etc/ssh', 'upper/root/.ssh', 'work'])
    await mkdir(join(dir, d), { recursive: true });
  await exec('ssh-keygen', ['-A', '-f', join(dir, 'upper')]);
  await writeFile(join(dir, 'upper/root/.ssh/authorized_keys'), `${publicKey}\n`, { mode: 0o600 });
  await writeFile(join(dir, 'server.json'), '{}');
  await grantPool();
  const range = await reserveIdRange(id, dir);
  await shiftOwnership(join(dir, 'upper'), idBaseOf(range));
  await makeCgroups(id, planOf('vps-1-2')!);
  await makeNetwork(id, slot, 'bench-bare');
  await mkdir(MOUNT_SCRATCH, { recursive: true });
  const log = openSync(join(dir, 'console.log'), 'a');
  const procs = cgroupDirs(id).map((d) => join(d, 'cgroup.procs'));
  const child = spawn(
    '/bin/sh',
    [
      '-c',
      `for f in "$@"; do echo $$ > "$f"; done; exec nsenter --net=/run/netns/${netnsOf(id)} unshare --mount --propagation private -- /bin/sh -c "$FJORD_STAGE0"`,
      'bare',
      ...procs,
    ],
    {
      detached: true,
      stdio: ['ignore', log, log],
      env: {
        PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
        FJORD_STAGE0: STAGE0_SCRIPT,
        FJORD_INIT: STAGE1_SCRIPT,
        FJORD_PYTHON: PYTHON,
        FJORD_HELPER: LAUNCH_HELPER,
        FJORD_SECCOMP: '',
        FJORD_LXCFS: '',
        FJORD_ID_BASE: String(idBaseOf(range)),
        FJORD_ID_COUNT: String(ID_COUNT),
        FJORD_LOWER: lower,
        FJORD_UPPER: join(dir, 'upper'),
        FJORD_WORK: join(dir, 'work'),
        FJORD_HOSTNAME: id,
      },
    },
  );
  closeSync(log);
  const t1 = await sshUntilIn(addressesOf(slot).server);
  await sleep(1000);
  const memory = await memoryOf(id);
  return {
    ms: t1 - t0,
    memory,
    stop: async () => {
      const [init] = await childrenOf(child.pid!);
      if (init) process.kill(init, 'SIGTERM');
      await new Promise((r) => child.once('exit', r));
      await removeNetwork(id, slot);
      await releaseIdRange(dir, range);
      for (let k = 0; k < 40 && cgroupDirs(id).some((d) => existsSync(d)); k++) {
        await removeCgroups(id);
        await sleep(50);
      }
    },
  };
}

const t = await TestFjord.create({
  FJORD_LOG_LEVEL: 'fatal',
  FJORD_VPS_DRIVER: 'namespace',
  FJORD_VPS_TEMPLATE_DIR: TEMPLATES,
  FJORD_LIMITS: JSON.stringify({ 'vps.servers': null, 'vps.vcpus': null }),
  FJORD_RATE_LIMITS: JSON.stringify({ vps: { points: 100_000_000, duration: 60 } }),
});
const fjordMs: number[] = [];
const bareMs: number[] = [];
const fjordMem: number[] = [];
const bareMem: number[] = [];
try {
  const c = await t.customer();
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    const r = await t.request('POST', '/v1/vps', {
      key: c.pat,
      body: {
        hostname: `bench${i}.example.test`,
        plan_code: 'vps-1-2',
        region: 'oslo',
        os_template: 'debian-12',
        ssh_keys: [publicKey],
      },
    });
    if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
    const t1 = await sshUntilIn(r.body.ipv4);
    fjordMs.push(t1 - t0);
    await sleep(1000);
    fjordMem.push(await memoryOf(r.body.id));
    await t.request('DELETE', `/v1/vps/${r.body.id}`, { key: c.pat });

    const b = await bare(i);
    bareMs.push(b.ms);
    bareMem.push(b.memory);
    await b.stop();
  }
} finally {
  const vps = t.fjord.areas.get('vps')?.service as VpsService | undefined;
  await vps?.driver.destroyAll?.();
  await t.close();
  rmSync(work, { recursive: true, force: true });
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
console.log(`${N} servers each, debian-12, warm template, store ${t.kernel.store.kind}`);
console.log(
  `POST /v1/vps → ssh login: p50 ${pct(fjordMs, 50).toFixed(0)} ms, p90 ${pct(fjordMs, 90).toFixed(0)} ms`,
);
console.log(
  `bare unshare + sshd → ssh login (reference): p50 ${pct(bareMs, 50).toFixed(0)} ms, p90 ${pct(bareMs, 90).toFixed(0)} ms`,
);
console.log(`ratio (Fjord / bare, p50): ${(pct(fjordMs, 50) / pct(bareMs, 50)).toFixed(2)}×`);
console.log(
  `memory of an idle server (cgroup, p50): Fjord ${mib(pct(fjordMem, 50))}, bare ${mib(pct(bareMem, 50))} — ratio ${(pct(fjordMem, 50) / Math.max(1, pct(bareMem, 50))).toFixed(2)}×`,
);
