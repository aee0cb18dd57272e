import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { KeyedMutex } from '../../../kernel/keyed-mutex.js';
import type { VpsPlan } from '../catalogue.js';
import type {
  ActionTiming,
  KnownServer,
  LoginGrant,
  LoginKeys,
  ServerMetrics,
  ServerSpec,
  VpsDriver,
} from './driver.js';
import { backupOf, restoreFrom, rollbackTo, writeSnapshot } from './namespace/disk.js';
import { unmountDisk } from './namespace/disk-image.js';
import { addressesOf } from './namespace/host.js';
import { checkNamespaceHost } from './namespace/host-check.js';
import { releaseIdRange } from './namespace/idmaps.js';
import { addLoginKey, removeLoginKey, TERMINAL_KEY_PREFIX } from './namespace/login-keys.js';
import { ServerMetricsReader } from './namespace/metrics.js';
import { ServerPower } from './namespace/power.js';
import { ServerFiles, type ServerMeta } from './namespace/server-files.js';
import { releaseSlot, reserveSlot } from './namespace/slots.js';
import { SshForwards } from './namespace/ssh-proxy.js';
import { canDebootstrap, DEBIAN_SUITES, type TemplateCache } from './namespace/template.js';

/** How long a graceful stop may take before the server's processes are killed. */
const STOP_GRACE_MS = 10_000;

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
 * namespace/slots.ts, the launch itself in namespace/launch.ts, bringing a server up and down in
 * namespace/power.ts, and the files kept beside its disk in namespace/server-files.ts.
 */
export class NamespaceVpsDriver implements VpsDriver, LoginKeys {
  readonly name = 'namespace';
  readonly simulated = false;
  private readonly queues = new KeyedMutex();
  private readonly metricsReader = new ServerMetricsReader();
  private readonly forwards: SshForwards;
  private readonly files: ServerFiles;
  private readonly power: ServerPower;

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
    this.files = new ServerFiles(root);
    this.power = new ServerPower(this.files, templates, log, this.forwards, this.metricsReader);
  }

  /** Refuses to start, saying what is missing, on a host that cannot make these servers. */
  static checkHost(scratch: string): Promise<void> {
    return checkNamespaceHost(scratch);
  }

  /** Runs the server's driver work one step at a time, in the order asked. */
  private queue<T>(id: string, work: () => Promise<T>): Promise<T> {
    return this.queues.run(id, work);
  }

  offers(osTemplate: string): boolean {
    return osTemplate in DEBIAN_SUITES && (canDebootstrap() || this.templates.isReady(osTemplate));
  }

  async provision(spec: ServerSpec) {
    const dir = this.files.dirOf(spec.id);
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
    const ready = this.queue(spec.id, () => this.power.up(spec));
    const a = addressesOf(slot);
    // The bound is generous: a first build of the template downloads ~100 MB of packages.
    return { seconds: cached ? 120 : 1800, ipv4: a.loopback, ipv6: a.server6, ready };
  }

  start(spec: ServerSpec): Promise<ActionTiming> {
    return Promise.resolve({
      seconds: 120,
      ready: this.queue(spec.id, () => this.power.up(spec)),
    });
  }

  stop(spec: ServerSpec): Promise<ActionTiming> {
    return Promise.resolve({
      seconds: 60,
      ready: this.queue(spec.id, () => this.power.halt(spec.id, STOP_GRACE_MS)),
    });
  }

  reboot(spec: ServerSpec): Promise<ActionTiming> {
    const ready = this.queue(spec.id, async () => {
      await this.power.halt(spec.id, STOP_GRACE_MS);
      await this.power.up(spec);
    });
    return Promise.resolve({ seconds: 180, ready });
  }

  destroy(id: string): Promise<void> {
    return this.queue(id, async () => {
      await this.power.halt(id, 0);
      await releaseIdRange(this.files.dirOf(id), (await this.files.meta(id))?.id_range);
      await releaseSlot(this.files.dirOf(id));
      await rm(this.files.dirOf(id), { recursive: true, force: true });
      this.metricsReader.forget(id);
    });
  }

  async metrics(id: string, _since: number, _now: number, plan: VpsPlan): Promise<ServerMetrics> {
    return this.metricsReader.read(id, this.files.dirOf(id), (await this.files.meta(id))?.slot ?? null, plan);
  }

  /** A tar of the upper layer (the server is stopped, so it is consistent); answers its size. */
  snapshot(id: string, name: string): Promise<number> {
    return this.queue(id, () => writeSnapshot(this.files.dirOf(id), name));
  }

  /** The upper layer replaced by the snapshot's: whatever was written since is gone. */
  rollback(id: string, name: string): Promise<void> {
    return this.queue(id, async () => {
      await rollbackTo(this.files.dirOf(id), name);
      await this.power.reshift(id);
    });
  }

  async deleteSnapshot(id: string, name: string): Promise<void> {
    await rm(join(this.files.dirOf(id), 'snapshots', `${name}.tar`), { force: true });
  }

  backup(spec: ServerSpec): Promise<Readable> {
    // A stopped server's disk, mounted for the backup, is unmounted after it (unless it started meanwhile).
    const release = () =>
      void this.queue(spec.id, async () => {
        if (!(await this.files.pidOf(spec.id))) await unmountDisk(this.files.dirOf(spec.id));
      }).catch(() => {});
    return this.queue(spec.id, () => backupOf(this.files.dirOf(spec.id), spec, this.name, release));
  }

  restore(spec: ServerSpec, archive: Readable): Promise<void> {
    return this.queue(spec.id, async () => {
      await restoreFrom(this.files.dirOf(spec.id), spec, archive);
      await this.power.reshift(spec.id);
    });
  }

  /**
   * A key for one terminal connection, added inside the running server (namespace/login-keys.ts)
   * and reached on the server's own address, which answers from the host even where the loopback
   * relay could not listen.
   */
  async grantLogin(id: string, publicKey: string): Promise<LoginGrant> {
    const init = await this.files.initOf(id);
    const meta = await this.files.meta(id);
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
          const now = await this.files.initOf(id);
          // A server stopped meanwhile keeps the line until it runs again: adopt() removes it.
          if (now) await removeLoginKey(now, marker);
        })();
        return revoked;
      },
    };
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
        } else if (!k.up) await this.queue(id, () => this.power.halt(id, 0));
        else if (await this.files.pidOf(id)) await this.queue(id, () => this.power.adopt(id));
        else {
          await this.queue(id, async () => {
            await this.power.halt(id, 0);
            await this.power.up(k.spec);
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
          this.queue(id, () => this.power.halt(id, STOP_GRACE_MS)).catch((err) =>
            this.log.error({ err, vps: id }, 'stopping a server failed'),
          ),
        ),
      );
    await this.forwards.closeAll();
  }

  async destroyAll(): Promise<void> {
    for (const id of await readdir(this.root).catch(() => [] as string[])) await this.destroy(id);
  }
}
