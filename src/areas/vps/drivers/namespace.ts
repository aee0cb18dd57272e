import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { KeyedMutex } from '../../../kernel/keyed-mutex.js';
import { planOf, type VpsPlan } from '../catalogue.js';
import type {
  ActionTiming,
  KnownServer,
  LoginGrant,
  LoginKeys,
  ServerMetrics,
  ServerSpec,
  VpsDriver,
} from './driver.js';
import { backupOf, prepareDisk, restoreFrom, rollbackTo, writeSnapshot } from './namespace/disk.js';
import { ensureDisk, mountDisk, unmountDisk, upperOf, withDisk, workOf } from './namespace/disk-image.js';
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
} from './namespace/host.js';
import { checkNamespaceHost } from './namespace/host-check.js';
import { grantPool, idBaseOf, releaseIdRange, reserveIdRange, shiftOwnership } from './namespace/idmaps.js';
import { MOUNT_SCRATCH } from './namespace/init.js';
import { launchServer } from './namespace/launch.js';
import { addLoginKey, removeLoginKey } from './namespace/login-keys.js';
import { ServerMetricsReader } from './namespace/metrics.js';
import { releaseSlot, reserveSlot } from './namespace/slots.js';
import { SshForwards } from './namespace/ssh-proxy.js';
import { canDebootstrap, DEBIAN_SUITES, type TemplateCache } from './namespace/template.js';

/** What the driver keeps beside each server's disk. */
interface ServerMeta {
  id: string;
  hostname: string;
  template: string;
  plan_code: string;
  slot: number;
  /** The owner, whose private network the server is on (absent on disks made before it was kept). */
  customer?: string;
  /** The server's host id range (idmaps.ts); its upper layer's files are owned by that range. */
  id_range?: number;
}

/** The comment of every terminal key line, followed by the connection's own random part. */
const TERMINAL_KEY_PREFIX = 'fjord-terminal-';
/** How long a graceful stop may take before the server's processes are killed. */
const STOP_GRACE_MS = 10_000;
/** How long sshd may take to answer after the server is launched. */
const BOOT_TIMEOUT_MS = 30_000;

/**
 * Real servers on this machine, like system containers: each is a copy-on-write overlay over a
 * debootstrapped Debian root, in its own mount, PID, UTS and network namespaces, in cgroups
 * limited to its plan, with sshd as its one service. The server's own address is on a
 * point-to-point veth (10.213.x.y); Fjord forwards port 22 of a loopback address (127.213.x.y,
 * the `ipv4_address`) to it.
 *
 * Layout: `<root>/<id>/` holds `server.json`, `disk.img` (an ext4 image of the plan's disk size,
 * mounted at `disk/` while the server runs, holding the overlay's `upper` and `work` dirs: see
 * namespace/disk-image.ts), `snapshots/<name>.tar` (the upper layer, whiteouts and xattrs kept),
 * `console.log` (sshd's log) and `pid` (the server's `unshare`, whose one child is PID 1).
 * What is done to those files alone is in namespace/disk.ts, the network slots in
 * namespace/slots.ts, the launch itself in namespace/launch.ts.
 */
export class NamespaceVpsDriver implements VpsDriver, LoginKeys {
  readonly name = 'namespace';
  readonly simulated = false;
  private readonly queues = new KeyedMutex();
  private readonly metricsReader = new ServerMetricsReader();
  private readonly forwards: SshForwards;

  constructor(
    private readonly root: string,
    readonly templates: TemplateCache,
    private readonly log: Logger,
    private readonly onStop: 'stop' | 'leave' = 'stop',
    sshPort = 22,
  ) {
    this.forwards = new SshForwards(sshPort, (id, err) =>
      this.log.warn(
        { err, vps: id },
        'cannot forward the server loopback SSH port; its own address still works',
      ),
    );
  }

  /** Refuses to start, saying what is missing, on a host that cannot make these servers. */
  static checkHost(scratch: string): Promise<void> {
    return checkNamespaceHost(scratch);
  }

  private dirOf(id: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`bad server id ${id}`);
    return join(this.root, id);
  }

  private marker = (id: string) => `fjord-vps-${id}`;

  /** Runs the server's driver work one step at a time, in the order asked. */
  private queue<T>(id: string, work: () => Promise<T>): Promise<T> {
    return this.queues.run(id, work);
  }

  offers(osTemplate: string): boolean {
    return osTemplate in DEBIAN_SUITES && (canDebootstrap() || this.templates.isReady(osTemplate));
  }

  async provision(spec: ServerSpec) {
    const dir = this.dirOf(spec.id);
    await mkdir(join(dir, 'snapshots'), { recursive: true });
    const slot = await reserveSlot(this.log, spec.id, dir);
    const meta: ServerMeta = {
      id: spec.id,
      hostname: spec.hostname,
      template: spec.osTemplate,
      plan_code: spec.plan.plan_code,
      slot,
      customer: spec.customerId,
    };
    await writeFile(join(dir, 'server.json'), `${JSON.stringify(meta, null, 2)}\n`);
    const cached = this.templates.isReady(spec.osTemplate);
    const ready = this.queue(spec.id, () => this.up(spec));
    const a = addressesOf(slot);
    // The bound is generous: a first build of the template downloads ~100 MB of packages.
    return { seconds: cached ? 120 : 1800, ipv4: a.loopback, ipv6: a.server6, ready };
  }

  start(spec: ServerSpec): Promise<ActionTiming> {
    return Promise.resolve({
      seconds: 120,
      ready: this.queue(spec.id, () => this.up(spec)),
    });
  }

  stop(spec: ServerSpec): Promise<ActionTiming> {
    return Promise.resolve({
      seconds: 60,
      ready: this.queue(spec.id, () => this.halt(spec.id, STOP_GRACE_MS)),
    });
  }

  reboot(spec: ServerSpec): Promise<ActionTiming> {
    const ready = this.queue(spec.id, async () => {
      await this.halt(spec.id, STOP_GRACE_MS);
      await this.up(spec);
    });
    return Promise.resolve({ seconds: 180, ready });
  }

  destroy(id: string): Promise<void> {
    return this.queue(id, async () => {
      await this.halt(id, 0);
      await releaseIdRange(this.dirOf(id), (await this.meta(id))?.id_range);
      await releaseSlot(this.dirOf(id));
      await rm(this.dirOf(id), { recursive: true, force: true });
      this.metricsReader.forget(id);
    });
  }

  async metrics(id: string, _since: number, _now: number, plan: VpsPlan): Promise<ServerMetrics> {
    return this.metricsReader.read(id, this.dirOf(id), (await this.meta(id))?.slot ?? null, plan);
  }

  /** A tar of the upper layer (the server is stopped, so it is consistent); answers its size. */
  snapshot(id: string, name: string): Promise<number> {
    return this.queue(id, () => writeSnapshot(this.dirOf(id), name));
  }

  /** The upper layer replaced by the snapshot's: whatever was written since is gone. */
  rollback(id: string, name: string): Promise<void> {
    return this.queue(id, async () => {
      await rollbackTo(this.dirOf(id), name);
      await this.reshift(id);
    });
  }

  async deleteSnapshot(id: string, name: string): Promise<void> {
    await rm(join(this.dirOf(id), 'snapshots', `${name}.tar`), { force: true });
  }

  backup(spec: ServerSpec): Promise<Readable> {
    // A stopped server's disk, mounted for the backup, is unmounted after it (unless it started meanwhile).
    const release = () =>
      void this.queue(spec.id, async () => {
        if (!(await this.pidOf(spec.id))) await unmountDisk(this.dirOf(spec.id));
      }).catch(() => {});
    return this.queue(spec.id, () => backupOf(this.dirOf(spec.id), spec, this.name, release));
  }

  restore(spec: ServerSpec, archive: Readable): Promise<void> {
    return this.queue(spec.id, async () => {
      await restoreFrom(this.dirOf(spec.id), spec, archive);
      await this.reshift(spec.id);
    });
  }

  /**
   * A key for one terminal connection, added inside the running server (namespace/login-keys.ts)
   * and reached on the server's own address, which answers from the host even where the loopback
   * relay could not listen.
   */
  async grantLogin(id: string, publicKey: string): Promise<LoginGrant> {
    const init = await this.initOf(id);
    const meta = await this.meta(id);
    if (!init || !meta) throw new Error(`server ${id} is not running`);
    const marker = `${TERMINAL_KEY_PREFIX}${randomBytes(8).toString('hex')}`;
    await addLoginKey(init, publicKey, marker);
    let revoked: Promise<void> | null = null;
    return {
      host: addressesOf(meta.slot).server,
      port: 22,
      user: 'root',
      revoke: () => {
        revoked ??= (async () => {
          const now = await this.initOf(id);
          // A server stopped meanwhile keeps the line until it runs again: adopt() removes it.
          if (now) await removeLoginKey(now, marker);
        })();
        return revoked;
      },
    };
  }

  /** The server's PID 1 on the host (the one child of its `unshare`), or null when it is down. */
  private async initOf(id: string): Promise<number | null> {
    const pid = await this.pidOf(id);
    if (!pid) return null;
    const [init] = await childrenOf(pid);
    return init ?? null;
  }

  async recover(known: KnownServer[]): Promise<void> {
    const byId = new Map(known.map((k) => [k.spec.id, k]));
    const present = await readdir(this.root).catch(() => [] as string[]);
    for (const id of present) {
      if (!/^[A-Za-z0-9_-]+$/.test(id)) continue;
      const k = byId.get(id);
      try {
        if (!k) {
          this.log.info({ vps: id }, 'removing a server the database does not know');
          await this.destroy(id);
        } else if (!k.up) await this.queue(id, () => this.halt(id, 0));
        else if (await this.pidOf(id)) await this.queue(id, () => this.adopt(id));
        else {
          await this.queue(id, async () => {
            await this.halt(id, 0);
            await this.up(k.spec);
          });
        }
      } catch (err) {
        this.log.error({ err, vps: id }, 'recovering a server failed');
      }
    }
  }

  async shutdown(): Promise<void> {
    const ids = await readdir(this.root).catch(() => [] as string[]);
    if (this.onStop === 'stop')
      await Promise.all(
        ids.map((id) =>
          this.queue(id, () => this.halt(id, STOP_GRACE_MS)).catch((err) =>
            this.log.error({ err, vps: id }, 'stopping a server failed'),
          ),
        ),
      );
    await this.forwards.closeAll();
  }

  async destroyAll(): Promise<void> {
    for (const id of await readdir(this.root).catch(() => [] as string[])) await this.destroy(id);
  }

  // -------------------------------------------------------------------------------------------

  /** A disk put back from a tar made before id ranges gets the server's range. */
  private async reshift(id: string): Promise<void> {
    const meta = await this.meta(id);
    const dir = this.dirOf(id);
    if (meta?.id_range !== undefined)
      await withDisk(dir, () => shiftOwnership(upperOf(dir), idBaseOf(meta.id_range!)));
  }

  private async writeMeta(meta: ServerMeta): Promise<void> {
    await writeFile(join(this.dirOf(meta.id), 'server.json'), `${JSON.stringify(meta, null, 2)}\n`);
  }

  /**
   * The server's id range, held across every Fjord on the machine; when it is not the one its
   * files are owned by (a disk from before ranges, or a range lost to another server), the upper
   * layer is shifted onto the new one.
   */
  private async idRange(meta: ServerMeta): Promise<number> {
    const dir = this.dirOf(meta.id);
    const range = await reserveIdRange(meta.id, dir, meta.id_range);
    if (range !== meta.id_range) {
      // Disks made under Fjord's umask 077 before this had a `/` only root could enter.
      if (meta.id_range === undefined) await chmod(upperOf(dir), 0o755);
      await shiftOwnership(upperOf(dir), idBaseOf(range));
      meta.id_range = range;
      await this.writeMeta(meta);
    }
    return range;
  }

  private async meta(id: string): Promise<ServerMeta | null> {
    const text = await readFile(join(this.dirOf(id), 'server.json'), 'utf8').catch(() => null);
    return text ? (JSON.parse(text) as ServerMeta) : null;
  }

  /** The live `unshare` of the server, or null. */
  private async pidOf(id: string): Promise<number | null> {
    const pid = Number((await readFile(join(this.dirOf(id), 'pid'), 'utf8').catch(() => '')).trim());
    return pid > 0 && (await isLive(pid, this.marker(id))) ? pid : null;
  }

  /**
   * Brings the server up: its template (built on first use), its disk image made and mounted,
   * its first files written once (a provisioning that failed before that is finished by the next
   * start), then the boot. A boot that fails unmounts the disk again (halt).
   */
  private async up(spec: ServerSpec): Promise<void> {
    await this.templates.ensure(spec.osTemplate);
    const dir = this.dirOf(spec.id);
    await ensureDisk(dir, spec.plan.storage_gb * 1024 ** 3);
    try {
      await mountDisk(dir);
      if (!existsSync(join(dir, 'prepared'))) await prepareDisk(dir, spec);
      const meta = await this.meta(spec.id);
      if (meta && meta.customer !== spec.customerId)
        await this.writeMeta({ ...meta, customer: spec.customerId });
      await this.boot(spec.id, spec.hostname);
    } catch (err) {
      if (!(await this.pidOf(spec.id))) await unmountDisk(dir);
      throw err;
    }
  }

  /** Launches the server and waits until its sshd answers. */
  private async boot(id: string, hostname: string): Promise<void> {
    if (await this.pidOf(id)) return this.adopt(id);
    const meta = await this.meta(id);
    if (!meta) throw new Error(`server ${id} has no disk on this machine`);
    const plan = planOf(meta.plan_code);
    if (!plan) throw new Error(`unknown plan ${meta.plan_code}`);
    const dir = this.dirOf(id);
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
        marker: this.marker(id),
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
  private async adopt(id: string): Promise<void> {
    const meta = await this.meta(id);
    if (!meta) return;
    await reserveSlot(this.log, id, this.dirOf(id), meta.slot);
    const a = addressesOf(meta.slot);
    await this.forwards.open(id, a.loopback, a.server);
    // Terminal keys a stop or a crashed Fjord left behind: no connection of this run uses them.
    const init = await this.initOf(id);
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
  private async halt(id: string, graceMs: number): Promise<void> {
    await this.forwards.close(id);
    const pid = await this.pidOf(id);
    const marker = this.marker(id);
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
    const meta = await this.meta(id);
    await removeNetwork(id, meta?.slot ?? null);
    await removeCgroups(id);
    await unmountDisk(this.dirOf(id));
    await rm(join(this.dirOf(id), 'pid'), { force: true });
  }
}
