import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { planOf } from '../../catalogue.js';
import type { ServerSpec } from '../driver.js';
import { prepareDisk } from './disk.js';
import { ensureDisk, mountDisk, unmountDisk, upperOf, withDisk, workOf } from './disk-image.js';
import {
  addressesOf,
  answers,
  cgroupPids,
  childrenOf,
  isLive,
  makeCgroups,
  makeNetwork,
  removeCgroups,
  removeNetwork,
  sleep,
} from './host.js';
import { grantPool, idBaseOf, reserveIdRange, shiftOwnership } from './idmaps.js';
import { MOUNT_SCRATCH } from './init.js';
import { launchServer } from './launch.js';
import { removeLoginKey, TERMINAL_KEY_PREFIX } from './login-keys.js';
import type { ServerMetricsReader } from './metrics.js';
import type { ServerFiles, ServerMeta } from './server-files.js';
import { reserveSlot } from './slots.js';
import type { SshForwards } from './ssh-proxy.js';
import type { TemplateCache } from './template.js';

// Bringing one server up and down on the host is a file of its own: it is the sequence of host
// steps (disk, id range, cgroups, network, launch, SSH forward, signals), while the driver
// (namespace.ts) is the VpsDriver interface, each server's work queued one step at a time.

/** How long sshd may take to answer after the server is launched. */
const BOOT_TIMEOUT_MS = 30_000;

/** The steps that start, adopt and stop one server; the caller has queued them for that server. */
export class ServerPower {
  constructor(
    private readonly files: ServerFiles,
    private readonly templates: TemplateCache,
    private readonly log: Logger,
    private readonly forwards: SshForwards,
    private readonly metricsReader: ServerMetricsReader,
  ) {}

  /** A disk put back from a tar made before id ranges gets the server's range. */
  async reshift(id: string): Promise<void> {
    const meta = await this.files.meta(id);
    const dir = this.files.dirOf(id);
    if (meta?.id_range !== undefined)
      await withDisk(dir, () => shiftOwnership(upperOf(dir), idBaseOf(meta.id_range!)));
  }

  /**
   * The server's id range, held across every Fjord on the machine; when it is not the one its
   * files are owned by (a disk from before ranges, or a range lost to another server), the upper
   * layer is shifted onto the new one.
   */
  private async idRange(meta: ServerMeta): Promise<number> {
    const dir = this.files.dirOf(meta.id);
    const range = await reserveIdRange(meta.id, dir, meta.id_range);
    if (range !== meta.id_range) {
      // Disks made under Fjord's umask 077 before this had a `/` only root could enter.
      if (meta.id_range === undefined) await chmod(upperOf(dir), 0o755);
      await shiftOwnership(upperOf(dir), idBaseOf(range));
      meta.id_range = range;
      await this.files.writeMeta(meta);
    }
    return range;
  }

  /**
   * Brings the server up: its template (built on first use), its disk image made and mounted,
   * its first files written once (a provisioning that failed before that is finished by the next
   * start), then the boot. A boot that fails unmounts the disk again (halt).
   */
  async up(spec: ServerSpec): Promise<void> {
    await this.templates.ensure(spec.osTemplate);
    const dir = this.files.dirOf(spec.id);
    await ensureDisk(dir, spec.plan.storage_gb * 1024 ** 3);
    try {
      await mountDisk(dir);
      if (!existsSync(join(dir, 'prepared'))) await prepareDisk(dir, spec);
      const meta = await this.files.meta(spec.id);
      if (meta && meta.customer !== spec.customerId)
        await this.files.writeMeta({ ...meta, customer: spec.customerId });
      await this.boot(spec.id, spec.hostname);
    } catch (err) {
      if (!(await this.files.pidOf(spec.id))) await unmountDisk(dir);
      throw err;
    }
  }

  /** Launches the server and waits until its sshd answers. */
  private async boot(id: string, hostname: string): Promise<void> {
    if (await this.files.pidOf(id)) return this.adopt(id);
    const meta = await this.files.meta(id);
    if (!meta) throw new Error(`server ${id} has no disk on this machine`);
    const plan = planOf(meta.plan_code);
    if (!plan) throw new Error(`unknown plan ${meta.plan_code}`);
    const dir = this.files.dirOf(id);
    const lower = await this.templates.ensure(meta.template);
    const slot = await reserveSlot(this.log, id, dir, meta.slot);
    if (slot !== meta.slot) {
      meta.slot = slot;
      await writeFile(join(dir, 'server.json'), `${JSON.stringify(meta, null, 2)}\n`);
    }
    await grantPool();
    await mkdir(MOUNT_SCRATCH, { recursive: true });
    const base = idBaseOf(await this.idRange(meta));
    await makeCgroups(id, plan);
    await makeNetwork(id, meta.slot, meta.customer ?? id);
    // Walked by the server's own root (an unprivileged id on the host) on its way to its disk.
    await chmod('/run/fjord-vps', 0o755);
    await chmod(MOUNT_SCRATCH, 0o755);
    // Rolled-back or restored layers leave no stale overlay work dir.
    await rm(workOf(dir), { recursive: true, force: true });
    await mkdir(workOf(dir));
    const child = await launchServer(
      {
        id,
        marker: this.files.marker(id),
        hostname,
        idBase: base,
        lower,
        upper: upperOf(dir),
        work: workOf(dir),
        consoleLog: join(dir, 'console.log'),
      },
      this.log,
    );
    await writeFile(join(dir, 'pid'), `${child.pid}\n`);
    this.metricsReader.forget(id);
    const address = addressesOf(meta.slot).server;
    const deadline = Date.now() + BOOT_TIMEOUT_MS;
    while (!(await answers(address, 22))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        const tail = (await readFile(join(dir, 'console.log'), 'utf8').catch(() => '')).slice(-2000);
        await this.halt(id, 0);
        throw new Error(`server ${id} did not start: ${tail.trim()}`);
      }
      await sleep(50);
    }
    await this.adopt(id);
  }

  /** A server running (from this run or a previous one) gets its SSH forward. */
  async adopt(id: string): Promise<void> {
    const meta = await this.files.meta(id);
    if (!meta) return;
    await reserveSlot(this.log, id, this.files.dirOf(id), meta.slot);
    const a = addressesOf(meta.slot);
    await this.forwards.open(id, a.loopback, a.server);
    // Terminal keys a stop or a crashed Fjord left behind: no connection of this run uses them.
    const init = await this.files.initOf(id);
    if (init)
      await removeLoginKey(init, TERMINAL_KEY_PREFIX).catch((err) =>
        this.log.warn({ err, vps: id }, 'cannot remove old terminal keys'),
      );
  }

  /**
   * Stops the server: SIGTERM to its PID 1 (which passes it on to every process and waits for
   * sshd), SIGKILL after `graceMs`; then its network namespace, veth and cgroups are removed and
   * its disk unmounted (its loop device goes with the last mount).
   */
  async halt(id: string, graceMs: number): Promise<void> {
    await this.forwards.close(id);
    const pid = await this.files.pidOf(id);
    const marker = this.files.marker(id);
    if (pid) {
      const [init] = await childrenOf(pid);
      if (graceMs > 0 && init) process.kill(init, 'SIGTERM');
      const until = Date.now() + graceMs;
      while (Date.now() < until && (await isLive(pid, marker))) await sleep(50);
      if (await isLive(pid, marker)) process.kill(pid, 'SIGKILL');
    }
    // Anything left in the cgroups (nothing, normally: the PID namespace ends with its PID 1).
    for (let i = 0; i < 100; i++) {
      const left = await cgroupPids(id);
      if (!left.length) break;
      for (const p of left) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {}
      }
      await sleep(50);
    }
    const meta = await this.files.meta(id);
    await removeNetwork(id, meta?.slot ?? null);
    await removeCgroups(id);
    await unmountDisk(this.files.dirOf(id));
    await rm(join(this.files.dirOf(id), 'pid'), { force: true });
  }
}
