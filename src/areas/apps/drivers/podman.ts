import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import {
  AppAtCapacity,
  type AppsDriver,
  type DeployOutcome,
  type DeployVerdict,
  type InstanceStats,
  type LogLine,
  type LogWindow,
  type RevisionSpec,
} from './driver.js';
import { lastLine, PodmanCli, ULIMITS } from './podman-cli.js';
import { ensureImage } from './podman-images.js';
import { podmanFollow, podmanLogs } from './podman-logs.js';
import { PodmanNetworks } from './podman-network.js';
import { podmanStats } from './podman-stats.js';
import { usernsFlags } from './podman-userns.js';
import { PodmanVolumes } from './podman-volumes.js';

export interface PodmanDriverOptions {
  /** The podman command (default `podman`). */
  podman?: string;
  /** Whether images may be pulled from registries on loopback, link-local or private addresses. */
  allowPrivateRegistries?: boolean;
}

/**
 * What confines every container beyond podman's defaults (its seccomp profile and capability
 * set, which stay on): no privilege gained through setuid files or file capabilities, and never
 * an image pulled behind Fjord's back (ensureImage pulls, with its address check, or loads).
 */
const CONFINED = ['--security-opt', 'no-new-privileges', '--pull', 'never'];

const PROBE_EVERY_MS = 200;

interface Running {
  name: string;
  appId: string;
  port: number;
  /** Requests being served now. */
  inflight: number;
  /** Real time of the last request's end (extra instances stop after the idle timeout of it). */
  lastUsed: number;
  idleMs: number;
}

/**
 * Real containers through Debian's podman with runc. One container per serving revision, named
 * `fjord-app-<revision id>` and labelled with this install's owner tag, so a later start adopts the
 * ones that should still run and removes the rest: none is left behind by a crash. CPU and memory
 * are capped by the revision's plan; the ingress reaches the container on a loopback port.
 */
export class PodmanAppsDriver implements AppsDriver {
  readonly name = 'podman';
  readonly simulated = false;
  readonly note = null;
  /** A cold start holds the request until the container passes its health check; no fixed time. */
  readonly coldStartSeconds = 0;
  /** Instances by revision; the first is `fjord-app-<revision>`, extras `fjord-app-<revision>-<n>`. */
  private readonly running = new Map<string, Running[]>();
  private readonly starting = new Map<string, Promise<Running>>();
  private readonly cli: PodmanCli;
  private readonly volumes: PodmanVolumes;
  private readonly networks: PodmanNetworks;
  private readonly allowPrivateRegistries: boolean;

  constructor(
    private readonly owner: string,
    private readonly log: Logger,
    /** Where volumes keep their files: one directory per volume, bind-mounted into instances. */
    volumesDir: string,
    options: PodmanDriverOptions = {},
  ) {
    this.cli = new PodmanCli(options.podman ?? 'podman', owner);
    this.volumes = new PodmanVolumes(volumesDir, log);
    this.networks = new PodmanNetworks(this.cli, owner);
    this.allowPrivateRegistries = options.allowPrivateRegistries ?? false;
  }

  async deploy(): Promise<DeployOutcome> {
    return { pending: true };
  }

  launch(spec: RevisionSpec, report: (verdict: DeployVerdict) => Promise<void>): void {
    this.start(spec)
      .then(
        () => report({ healthy: true }),
        (err: Error) => report({ healthy: false, reason: err.message }),
      )
      .catch((err) => this.log.error({ err, revision: spec.revisionId }, 'apps: reporting a deploy failed'));
  }

  async ensureRunning(spec: RevisionSpec) {
    const r = this.running.get(spec.revisionId)?.[0] ?? (await this.start(spec, 1));
    return { host: '127.0.0.1', port: r.port };
  }

  /**
   * An instance with room for one more request: the least busy one under `concurrency`, else a
   * new one while fewer than `max_instances` run or start, else AppAtCapacity.
   */
  async acquire(spec: RevisionSpec) {
    const rev = spec.revisionId;
    if (!this.running.get(rev)?.length) await this.start(spec, 1);
    const list = this.running.get(rev) ?? [];
    let r = list.filter((i) => i.inflight < spec.concurrency).sort((x, y) => x.inflight - y.inflight)[0];
    if (!r) {
      const starting = [...this.starting.keys()].filter((k) => k.startsWith(`fjord-app-${rev}`)).length;
      if (list.length + starting >= spec.maxInstances) throw new AppAtCapacity(spec.maxInstances);
      const taken = new Set([...list.map((i) => i.name), ...this.starting.keys()]);
      let n = 2;
      while (taken.has(`fjord-app-${rev}-${n}`)) n++;
      r = await this.start(spec, n);
    }
    const instance = r;
    instance.inflight++;
    let released = false;
    return {
      host: '127.0.0.1',
      port: instance.port,
      release: () => {
        if (released) return;
        released = true;
        instance.inflight--;
        instance.lastUsed = Date.now();
      },
    };
  }

  runningRevisions(): string[] {
    return [...this.running.keys()];
  }

  /** Stops extra instances (beyond the first) idle for their revision's idle timeout. */
  async trim(): Promise<void> {
    const now = Date.now();
    for (const [rev, list] of this.running) {
      const idle = list.slice(1).filter((i) => i.inflight === 0 && now - i.lastUsed >= i.idleMs);
      if (!idle.length) continue;
      this.running.set(
        rev,
        list.filter((i) => !idle.includes(i)),
      );
      await this.cli.run(['rm', '-f', '-t', '2', ...idle.map((i) => i.name)]).catch(() => undefined);
    }
  }

  async logs(revisionIds: string[], window: LogWindow): Promise<LogLine[]> {
    return podmanLogs(this.cli, this.running, revisionIds, window);
  }

  followLogs(revisionIds: string[], window: LogWindow, onLine: (l: LogLine) => void, signal: AbortSignal) {
    return podmanFollow(this.cli, this.running, revisionIds, window, onLine, signal);
  }

  async retire(_appId: string, revisionId: string): Promise<void> {
    this.running.delete(revisionId);
    const ids = await this.cli.ours(`fjord.revision=${revisionId}`);
    if (ids.length)
      await this.cli.run(['rm', '-f', '-t', '2', ...ids.map((c) => c.id)]).catch(() => undefined);
  }

  async destroy(appId: string): Promise<void> {
    for (const [rev, list] of this.running) if (list[0]?.appId === appId) this.running.delete(rev);
    const ids = await this.cli.ours(`fjord.app=${appId}`);
    if (ids.length)
      await this.cli.run(['rm', '-f', '-t', '2', ...ids.map((c) => c.id)]).catch(() => undefined);
    const customers = new Set(ids.map((c) => c.labels['fjord.customer']).filter((c) => c !== undefined));
    for (const customer of customers) await this.networks.releaseIfUnused(customer);
  }

  async stats(revisionIds: string[]): Promise<InstanceStats[]> {
    return podmanStats(this.cli, this.running, revisionIds);
  }

  createVolume(volumeId: string, sizeGb: number): Promise<void> {
    return this.volumes.create(volumeId, sizeGb);
  }

  volumeSizeEnforced(volumeId: string): Promise<boolean> {
    return this.volumes.sizeEnforced(volumeId);
  }

  volumeUsage(volumeId: string): Promise<number> {
    return this.volumes.usage(volumeId);
  }

  snapshotVolume(volumeId: string): Promise<Readable> {
    return this.volumes.snapshot(volumeId);
  }

  restoreVolume(volumeId: string, archive: Readable): Promise<void> {
    return this.volumes.restore(volumeId, archive);
  }

  removeVolume(volumeId: string): Promise<void> {
    return this.volumes.remove(volumeId);
  }

  /** Containers stay (the next start adopts them); volumes are unmounted on the host. */
  close(): Promise<void> {
    return this.volumes.unmountAll();
  }

  async adopt(keep: ReadonlySet<string>) {
    let adopted = 0;
    let removed = 0;
    for (const c of await this.cli.ours()) {
      const rev = c.labels['fjord.revision'] ?? '';
      const port =
        c.running && keep.has(rev) ? await this.cli.hostPort(c.id, Number(c.labels['fjord.port'])) : null;
      if (port !== null) {
        const list = this.running.get(rev) ?? [];
        list.push({
          name: c.name,
          appId: c.labels['fjord.app'] ?? '',
          port,
          inflight: 0,
          lastUsed: Date.now(),
          idleMs: Number(c.labels['fjord.idle_seconds'] ?? 300) * 1000,
        });
        this.running.set(rev, list);
        adopted++;
      } else {
        await this.cli.run(['rm', '-f', '-t', '2', c.id]).catch(() => undefined);
        removed++;
      }
    }
    return { adopted, removed };
  }

  /** Starts instance `n` of the revision and waits for its health check; one start per name at a time. */
  private start(spec: RevisionSpec, n = 1): Promise<Running> {
    const name = n === 1 ? `fjord-app-${spec.revisionId}` : `fjord-app-${spec.revisionId}-${n}`;
    const pending = this.starting.get(name);
    if (pending !== undefined) return pending;
    const p = this.startContainer(spec, name).finally(() => this.starting.delete(name));
    this.starting.set(name, p);
    return p;
  }

  private async startContainer(spec: RevisionSpec, name: string): Promise<Running> {
    await ensureImage(this.cli, spec, this.allowPrivateRegistries, this.log);
    await this.cli.run(['rm', '-f', '-t', '0', name]).catch(() => undefined);
    const mounts: string[] = [];
    // `U`: the volume's files belong to the app's id range (the same for all its instances).
    for (const v of spec.volumes) mounts.push('-v', `${await this.volumes.ready(v.id)}:${v.mountPath}:U`);
    // Variables go through a file readable by root only, so secrets never appear in a command line.
    const dir = await mkdtemp(join(tmpdir(), 'fjord-app-'));
    const envFile = join(dir, 'env');
    const vars = { ...spec.env, ...spec.secrets, PORT: String(spec.port) };
    await writeFile(
      envFile,
      Object.entries(vars)
        .map(([k, v]) => `${k}=${v.replace(/\n/g, ' ')}`)
        .join('\n'),
      { mode: 0o600 },
    );
    try {
      await this.networks.withNetwork(spec.customerId, (network) =>
        this.cli.run([
          'run',
          '-d',
          '--name',
          name,
          '--label',
          `fjord.owner=${this.owner}`,
          '--label',
          `fjord.app=${spec.appId}`,
          '--label',
          `fjord.customer=${spec.customerId}`,
          ...CONFINED,
          ...usernsFlags(spec.idSlot),
          '--pids-limit',
          String(spec.plan.max_processes),
          '--network',
          network,
          '--label',
          `fjord.revision=${spec.revisionId}`,
          '--label',
          `fjord.port=${spec.port}`,
          '--label',
          `fjord.idle_seconds=${spec.idleTimeoutSeconds}`,
          ...ULIMITS,
          '--memory',
          `${spec.plan.memory_mb}m`,
          '--cpus',
          String(spec.plan.cpu),
          '-p',
          `127.0.0.1::${spec.port}`,
          '--env-file',
          envFile,
          ...mounts,
          ...(spec.command ? ['--entrypoint', JSON.stringify(spec.command)] : []),
          spec.image,
          ...(spec.args ?? []),
        ]),
      );
    } catch (err) {
      throw new Error(`The container could not start: ${lastLine((err as Error).message)}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    try {
      const port = await this.cli.hostPort(name, spec.port);
      if (port === null) throw new Error(`The container publishes no port ${spec.port}.`);
      await this.healthy(name, port, spec);
      const r: Running = {
        name,
        appId: spec.appId,
        port,
        inflight: 0,
        lastUsed: Date.now(),
        idleMs: spec.idleTimeoutSeconds * 1000,
      };
      this.running.set(spec.revisionId, [...(this.running.get(spec.revisionId) ?? []), r]);
      return r;
    } catch (err) {
      await this.cli.run(['rm', '-f', '-t', '0', name]).catch(() => undefined);
      throw err;
    }
  }

  /** Healthy at the first 2xx or 3xx; failed after interval × threshold seconds, or when it exits. */
  private async healthy(name: string, port: number, spec: RevisionSpec): Promise<void> {
    const hc = spec.healthCheck;
    const deadline = Date.now() + hc.interval_seconds * hc.failure_threshold * 1000;
    let last = 'no answer';
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}${hc.path}`, {
          signal: AbortSignal.timeout(hc.timeout_seconds * 1000),
          redirect: 'manual',
        });
        await res.arrayBuffer();
        if (res.status < 400) return;
        last = `HTTP ${res.status}`;
      } catch (err) {
        last = (err as Error).message;
      }
      const state = await this.cli
        .run(['inspect', '-f', '{{.State.Running}} {{.State.ExitCode}}', name])
        .catch(() => 'false -1');
      if (state.startsWith('false')) {
        const logs = await this.cli.run(['logs', '--tail', '5', name]).catch(() => '');
        throw new Error(
          `The container exited with code ${state.split(' ')[1]?.trim()} before passing its health check.${
            logs.trim() ? ` Last output: ${logs.trim().slice(-500)}` : ''
          }`,
        );
      }
      if (Date.now() >= deadline)
        throw new Error(
          `Health check GET ${hc.path} on port ${spec.port} failed for ${hc.interval_seconds * hc.failure_threshold} s (last: ${last}).`,
        );
      await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
    }
  }
}
