/**
 * lxcfs (Debian's, 5.0): a FUSE file system whose `proc/meminfo`, `cpuinfo`, `stat`, `uptime`,
 * `loadavg`, `diskstats` and `swaps` answer each reader with the figures of its own cgroups. A
 * server's /proc shows those files, so `free`, `top`, `uptime` and `nproc` inside tell the plan's
 * memory and vCPUs, not the host's. The system's lxcfs is used when it runs; else Fjord starts
 * one of its own (it daemonizes and outlives Fjord, like the servers that read it).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type { Logger } from 'pino';
import { sleep } from './host.js';

const SYSTEM = '/var/lib/lxcfs';
const OWN = '/run/fjord-vps/lxcfs';
const binary = () => ['/usr/bin/lxcfs', '/bin/lxcfs'].find((p) => existsSync(p));

let started: Promise<string | null> | null = null;

/** Where lxcfs is mounted, starting Fjord's own when none runs; null (logged once) without lxcfs. */
export function lxcfsRoot(log: Logger): Promise<string | null> {
  for (const dir of [SYSTEM, OWN]) if (existsSync(`${dir}/proc/meminfo`)) return Promise.resolve(dir);
  started ??= (async () => {
    const bin = binary();
    if (!bin) {
      log.warn('lxcfs is not installed: servers see the host memory and CPUs in /proc');
      return null;
    }
    // An lxcfs that died leaves its mount behind, answering ENOTCONN: detach it first.
    await new Promise((resolve) => execFile('umount', ['-l', OWN], resolve));
    await mkdir(OWN, { recursive: true });
    const child = spawn(bin, ['--enable-cfs', '-p', '/run/fjord-vps/lxcfs.pid', OWN], {
      detached: true,
      stdio: 'ignore',
    });
    child.on('error', () => {});
    child.unref();
    for (let i = 0; i < 100 && !existsSync(`${OWN}/proc/meminfo`); i++) await sleep(50);
    if (existsSync(`${OWN}/proc/meminfo`)) return OWN;
    log.warn('lxcfs did not start: servers see the host memory and CPUs in /proc');
    return null;
  })().finally(() => {
    started = null;
  });
  return started;
}
