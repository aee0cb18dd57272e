import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import {
  admitInterface,
  allowHostResolvers,
  forgetInterface,
} from '../../../../kernel/net/tenant-firewall.js';
import type { VpsPlan } from '../../catalogue.js';

/**
 * The host side of a namespace server: its network namespace and veth, its cgroups, its
 * processes. Every name carries the server's id or its network slot, so what a crashed run left
 * is found again by name.
 */

const exec = promisify(execFile);

/** Runs a command; throws with its stderr when it fails. */
export async function run(cmd: string, args: string[], timeoutMs = 120_000): Promise<string> {
  try {
    const { stdout } = await exec(cmd, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')}: ${(e.stderr || e.message).trim()}`);
  }
}

export const netnsOf = (id: string) => `fjord-vps-${id}`;
export const hostVethOf = (slot: number) => `fjvps${slot}`;

/**
 * The server's point-to-point link: slot n is the /30 at 10.213.0.0 + 4n (host .1, server .2)
 * and, for the SSH forward, the loopback address 127.213.x.y with the same last two octets.
 */
export function addressesOf(slot: number) {
  const base = slot * 4;
  const hi = (base >> 8) & 255;
  const lo = base & 255;
  return {
    host: `10.213.${hi}.${lo + 1}`,
    server: `10.213.${hi}.${lo + 2}`,
    loopback: `127.213.${hi}.${lo + 2}`,
    host6: `fd21:3000:0:${slot.toString(16)}::1`,
    server6: `fd21:3000:0:${slot.toString(16)}::2`,
  };
}
export const SLOTS = 16_384;

/**
 * The network namespace with the server's end of the veth (eth0), addressed, default route to the
 * host, and the host end admitted to the customer's side of the tenant firewall. The namespace
 * belongs to the host, not to the server's user namespace: the server cannot change its address,
 * routes or firewall, nor open raw sockets; it may bind ports below 1024 and ping.
 */
export async function makeNetwork(id: string, slot: number, customerId: string): Promise<void> {
  const ns = netnsOf(id);
  const veth = hostVethOf(slot);
  const a = addressesOf(slot);
  await removeNetwork(id, slot);
  await run('ip', ['netns', 'add', ns]);
  await run('ip', ['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
  await run('ip', ['addr', 'add', `${a.host}/30`, 'dev', veth]);
  await run('ip', ['link', 'set', veth, 'up']);
  await run('ip', ['-n', ns, 'addr', 'add', `${a.server}/30`, 'dev', 'eth0']);
  await run('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
  await run('ip', ['-n', ns, 'link', 'set', 'eth0', 'up']);
  await run('ip', ['-n', ns, 'route', 'add', 'default', 'via', a.host]);
  await run('ip', [
    'netns',
    'exec',
    ns,
    'sh',
    '-c',
    'echo 0 > /proc/sys/net/ipv4/ip_unprivileged_port_start && echo "0 2147483647" > /proc/sys/net/ipv4/ping_group_range',
  ]);
  await admitInterface(veth, customerId);
  await allowHostResolvers();
  await run('ip', ['addr', 'add', `${a.host6}/64`, 'dev', veth, 'nodad']).catch(() => {});
  await run('ip', ['-n', ns, 'addr', 'add', `${a.server6}/64`, 'dev', 'eth0', 'nodad']).catch(() => {});
}

/** Removes the namespace (its veth goes with it) and a host veth left without one. */
export async function removeNetwork(id: string, slot: number | null): Promise<void> {
  if (slot !== null) await forgetInterface(hostVethOf(slot));
  if (existsSync(`/run/netns/${netnsOf(id)}`)) await run('ip', ['netns', 'del', netnsOf(id)]).catch(() => {});
  if (slot !== null && existsSync(`/sys/class/net/${hostVethOf(slot)}`))
    await run('ip', ['link', 'del', hostVethOf(slot)]).catch(() => {});
}

/** Bytes through the server's veth, seen from the server: in = what the host side sent. */
export async function vethCounters(slot: number): Promise<{ in: number; out: number }> {
  const dir = `/sys/class/net/${hostVethOf(slot)}/statistics`;
  const read = (f: string) =>
    readFile(join(dir, f), 'utf8').then(
      (t) => Number(t.trim()),
      () => 0,
    );
  return { in: await read('tx_bytes'), out: await read('rx_bytes') };
}

// ---------------------------------------------------------------------------------------------
// cgroups (v1 controllers, as on this kind of host; v2 when only the unified hierarchy exists)

const CG = '/sys/fs/cgroup';
const V1 = ['memory', 'pids', 'cpu', 'cpuacct'] as const;
const isV2 = () => !existsSync(join(CG, 'memory')) && existsSync(join(CG, 'cgroup.controllers'));

/** The server's cgroup directories (one per v1 controller, or one v2 group). */
export function cgroupDirs(id: string): string[] {
  if (isV2()) return [join(CG, 'fjord-vps', id)];
  return V1.filter((c) => existsSync(join(CG, c))).map((c) => join(CG, c, 'fjord-vps', id));
}

/** Makes the server's cgroups with its plan's limits: memory, process count and CPU time. */
export async function makeCgroups(id: string, plan: VpsPlan): Promise<string[]> {
  const dirs = cgroupDirs(id);
  const memory = plan.ram_gb * 1024 ** 3;
  const pids = 1024 * plan.vcpus;
  // Readable by the server's root (an unprivileged id on the host), who may mount its own memory
  // hierarchy inside and read its limit: mkdir follows Fjord's umask (077), so the modes are set.
  for (const dir of dirs) {
    await mkdir(dir, { recursive: true });
    for (const level of [dirname(dir), dir]) await chmod(level, 0o755);
  }
  const set = (file: string, value: string | number) =>
    writeFile(file, String(value)).catch((err) => {
      throw new Error(`cannot set ${file}: ${(err as Error).message}`);
    });
  if (isV2()) {
    await writeFile(join(CG, 'fjord-vps', 'cgroup.subtree_control'), '+memory +pids +cpu').catch(() => {});
    await set(join(dirs[0]!, 'memory.max'), memory);
    await set(join(dirs[0]!, 'pids.max'), pids);
    await set(join(dirs[0]!, 'cpu.max'), `${plan.vcpus * 100_000} 100000`);
    return dirs;
  }
  for (const dir of dirs) {
    if (dir.includes('/memory/')) await set(join(dir, 'memory.limit_in_bytes'), memory);
    if (dir.includes('/pids/')) await set(join(dir, 'pids.max'), pids);
    if (dir.includes('/cpu/')) {
      await set(join(dir, 'cpu.cfs_period_us'), 100_000);
      await set(join(dir, 'cpu.cfs_quota_us'), plan.vcpus * 100_000);
    }
  }
  return dirs;
}

/** Removes the server's cgroups (once its processes are gone). */
export async function removeCgroups(id: string): Promise<void> {
  for (const dir of cgroupDirs(id)) await rmdir(dir).catch(() => {});
}

/** Processes still in the server's cgroups (empty when it is down). */
export async function cgroupPids(id: string): Promise<number[]> {
  const out = new Set<number>();
  for (const dir of cgroupDirs(id)) {
    const text = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
    for (const line of text.split('\n')) if (line.trim()) out.add(Number(line));
  }
  return [...out];
}

/** CPU nanoseconds used, and memory in use, by the server's processes. */
export async function cgroupUsage(id: string): Promise<{ cpuNs: number; memoryBytes: number }> {
  const read = (path: string) =>
    readFile(path, 'utf8').then(
      (t) => t,
      () => '',
    );
  if (isV2()) {
    const dir = join(CG, 'fjord-vps', id);
    const stat = await read(join(dir, 'cpu.stat'));
    const usec = Number(/usage_usec (\d+)/.exec(stat)?.[1] ?? 0);
    return { cpuNs: usec * 1000, memoryBytes: Number((await read(join(dir, 'memory.current'))).trim() || 0) };
  }
  const cpuNs = Number((await read(join(CG, 'cpuacct', 'fjord-vps', id, 'cpuacct.usage'))).trim() || 0);
  const memoryBytes = Number(
    (await read(join(CG, 'memory', 'fjord-vps', id, 'memory.usage_in_bytes'))).trim() || 0,
  );
  return { cpuNs, memoryBytes };
}

// ---------------------------------------------------------------------------------------------
// processes

/** Whether a pid is a live (not zombie) process whose command line contains `marker`. */
export async function isLive(pid: number, marker: string): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  if (!stat || /\) Z /.test(stat)) return false;
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  return cmdline.split('\0').includes(marker);
}

/** The children of a process (the server's PID 1 is the one child of its `unshare`). */
export async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return text.split(/\s+/).filter(Boolean).map(Number);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether something accepts TCP connections at host:port. */
export function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(500);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}
