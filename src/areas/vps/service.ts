import type { Logger } from 'pino';
import type { IdentityService } from '../../kernel/auth/identity.js';
import { type Clock, isoOf } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { Store } from '../../kernel/store/store.js';
import type { AccountService } from '../account/service.js';
import type { RegionsService } from '../regions/service.js';
import type { InternalObjects } from '../storage/service.js';
import { OS_TEMPLATES, PLANS, planOf, templateOf } from './catalogue.js';
import type { ActionTiming, LoginGrant, LoginKeys, ServerSpec, VpsDriver } from './drivers/driver.js';
import { vpsErrors } from './errors.js';
import type { VpsServersTable, VpsStatus } from './migrations.js';
import { VpsRepo } from './repo.js';
import { quiet, settle, settleWhenReady } from './server-moves.js';

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export interface CreateServer {
  hostname: string;
  plan_code: string;
  region: string;
  os_template: string;
  display_name?: string;
  ssh_keys?: string[];
}

/** Letters, digits and underscore; anything else becomes an underscore, runs collapsed. */
export function sanitiseSnapshotName(name: string): string {
  return name
    .trim()
    .replace(/[^A-Za-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64);
}

export class VpsService {
  readonly repo: VpsRepo;
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly identity: IdentityService,
    private readonly limits: Limits,
    private readonly regions: RegionsService,
    private readonly account: AccountService,
    readonly driver: VpsDriver,
    /** Where the servers' backup archives are (deleted with the server). */
    private readonly backupFiles: InternalObjects,
    private readonly log: Logger,
  ) {
    this.repo = VpsRepo.of(store);
  }

  plans(currency?: string) {
    const region = this.vpsRegions().find((r) => r.available) ?? this.vpsRegions()[0];
    const prices = region ? this.regions.pricing(region.id, currency) : null;
    return PLANS.map((p) => ({
      ...p,
      price: prices?.services['vps']?.[`${p.plan_code}_per_month`] ?? 0,
      currency: prices?.currency ?? this.regions.defaultCurrency,
    }));
  }

  osTemplates() {
    return OS_TEMPLATES.map((t) => ({ ...t, available: this.driver.offers(t.id) }));
  }

  vpsRegions() {
    return this.regions
      .list()
      .regions.filter((r) => this.regions.get(r.code).available_services.includes('vps'))
      .map((r) => ({
        id: r.code,
        name: r.name,
        country: r.country,
        available: this.regions.offers(r.code, 'vps'),
      }));
  }

  async create(customerId: string, input: CreateServer) {
    const hostname = input.hostname.trim().toLowerCase().replace(/\.$/, '');
    if (!HOSTNAME.test(hostname)) throw vpsErrors.badHostname();
    const plan = planOf(input.plan_code);
    if (!plan) throw vpsErrors.unknownPlan(input.plan_code);
    const template = templateOf(input.os_template);
    if (!template) throw vpsErrors.unknownTemplate(input.os_template);
    if (!this.driver.offers(template.id)) throw vpsErrors.templateUnavailable(template.id);
    const region = input.region.trim().toLowerCase();
    if (!this.vpsRegions().some((r) => r.id === region && r.available))
      throw vpsErrors.unknownRegion(input.region);
    const keys = await this.account.keysForNewServer(customerId, input.ssh_keys ?? []);
    const tier = (await this.identity.getCustomer(customerId))?.plan ?? 'free';
    const maxServers = this.limits.of('vps.servers', tier);
    const maxVcpus = this.limits.of('vps.vcpus', tier);
    const id = newId();
    const spec: ServerSpec = {
      id,
      customerId,
      hostname,
      plan,
      osTemplate: template.id,
      publicKeys: keys.map((k) => k.public_key),
    };
    let ready: Promise<void> | undefined;
    // Counted and inserted under the customer's lock: two creates at once cannot both take the last place.
    const row = await this.store.unitOfWork({ locks: [`vps:customer:${customerId}`] }, async ({ tx }) => {
      const repo = VpsRepo.over(tx);
      const used = await repo.usage(customerId);
      if (maxServers !== null && used.servers >= maxServers)
        throw vpsErrors.quota('virtual servers', maxServers);
      if (maxVcpus !== null && used.vcpus + plan.vcpus > maxVcpus)
        throw vpsErrors.quota('vCPUs in all', maxVcpus);
      const now = this.clock.nowMs();
      const row: VpsServersTable = {
        id,
        customer_id: customerId,
        hostname,
        display_name: input.display_name?.trim() || null,
        status: 'provisioning',
        next_status: 'running',
        settles_at: null,
        action: 'provision',
        plan_code: plan.plan_code,
        vcpus: plan.vcpus,
        region,
        os_template: template.id,
        ipv4_address: null,
        ipv6_address: null,
        running_since: null,
        created_at: now,
      };
      const started = await this.driver.provision(spec);
      ready = quiet(started.ready);
      row.settles_at = now + started.seconds * 1000;
      row.ipv4_address = started.ipv4;
      row.ipv6_address = started.ipv6;
      await repo.insertServer(
        row,
        keys.map((k) => ({
          server_id: id,
          customer_id: customerId,
          fingerprint: k.fingerprint,
          public_key: k.public_key,
        })),
      );
      return row;
    });
    settleWhenReady(this.store, this.clock, this.log, id, 'provision', ready);
    return {
      id: row.id,
      hostname: row.hostname,
      status: row.status,
      ipv4: row.ipv4_address,
      ipv6: row.ipv6_address,
    };
  }

  async list(customerId: string) {
    const now = this.clock.nowMs();
    const instances = (await this.repo.servers(customerId)).map((r) => {
      const s = settle(r, now);
      return {
        id: s.id,
        hostname: s.hostname,
        display_name: s.display_name,
        status: s.status,
        ipv4_address: s.ipv4_address,
      };
    });
    return { instances, total: instances.length };
  }

  async get(customerId: string, id: string) {
    const s = settle(await this.find(customerId, id), this.clock.nowMs());
    const plan = planOf(s.plan_code)!;
    return {
      id: s.id,
      hostname: s.hostname,
      display_name: s.display_name,
      status: s.status,
      plan_code: s.plan_code,
      region: s.region,
      os_template: s.os_template,
      ipv4_address: s.ipv4_address,
      ipv6_address: s.ipv6_address,
      vcpus: plan.vcpus,
      memory_gb: plan.ram_gb,
      disk_gb: plan.storage_gb,
      created_at: isoOf(s.created_at),
    };
  }

  async status(customerId: string, id: string) {
    const now = this.clock.nowMs();
    const s = settle(await this.find(customerId, id), now);
    if (s.status !== 'running' || s.running_since === null) {
      return {
        status: s.status,
        uptime_seconds: 0,
        cpu_usage_percent: 0,
        memory_usage_percent: 0,
        disk_usage_percent: 0,
        network_in_bytes: 0,
        network_out_bytes: 0,
      };
    }
    const m = await this.driver.metrics(s.id, s.running_since, now, planOf(s.plan_code)!);
    return { status: s.status, uptime_seconds: Math.floor((now - s.running_since) / 1000), ...m };
  }

  start(customerId: string, id: string) {
    return this.move(customerId, id, 'start', ['stopped'], 'starting', (spec) => this.driver.start(spec));
  }
  stop(customerId: string, id: string) {
    return this.move(
      customerId,
      id,
      'stop',
      ['running'],
      'stopping',
      (spec) => this.driver.stop(spec),
      'stopped',
    );
  }
  /** A reboot reports `starting` until the server is back, since it does not answer meanwhile. */
  reboot(customerId: string, id: string) {
    return this.move(customerId, id, 'reboot', ['running'], 'starting', (spec) => this.driver.reboot(spec));
  }

  async remove(customerId: string, id: string) {
    const archives = await this.store.unitOfWork({ locks: [`vps:server:${id}`] }, async ({ tx }) => {
      const repo = VpsRepo.over(tx);
      if (!(await repo.server(customerId, id))) throw vpsErrors.notFound();
      await this.driver.destroy(id);
      return repo.deleteServer(id);
    });
    // Backups go with the server, as on DigitalOcean and Hetzner: nothing is billed after.
    for (const key of archives)
      await this.backupFiles.delete(key).catch((err) => {
        this.log.warn({ err, key }, 'deleting a backup archive of a deleted server failed');
      });
    return {
      success: true,
      action: 'delete',
      message: 'The server, its disk, its snapshots and its backups are deleted.',
    };
  }

  async snapshots(customerId: string, id: string) {
    await this.find(customerId, id);
    const snapshots = (await this.repo.snapshots(id)).map((r) => ({
      name: r.name,
      description: r.description,
      created_at: isoOf(r.created_at),
      size_bytes: Number(r.size_bytes),
    }));
    return { snapshots, total: snapshots.length, max_snapshots: this.maxSnapshots() };
  }

  async createSnapshot(customerId: string, id: string, rawName: string, description?: string) {
    const name = sanitiseSnapshotName(rawName);
    if (!name) throw vpsErrors.badSnapshotName();
    const max = this.maxSnapshots();
    await this.whileStopped(customerId, id, 'snapshot', async (repo) => {
      if (await repo.snapshot(id, name)) throw vpsErrors.snapshotExists(name);
      if ((await repo.snapshots(id)).length >= max) throw vpsErrors.snapshotLimit(max);
      const size = await this.driver.snapshot(id, name);
      await repo.insertSnapshot({
        server_id: id,
        name,
        description: description?.trim() || null,
        size_bytes: size,
        created_at: this.clock.nowMs(),
      });
    });
    return { status: 'created' as const, snapshot_name: name };
  }

  async deleteSnapshot(customerId: string, id: string, name: string) {
    await this.store.unitOfWork({ locks: [`vps:server:${id}`] }, async ({ tx }) => {
      const repo = VpsRepo.over(tx);
      if (!(await repo.server(customerId, id))) throw vpsErrors.notFound();
      if (!(await repo.snapshot(id, name))) throw vpsErrors.snapshotNotFound();
      await this.driver.deleteSnapshot(id, name);
      await repo.deleteSnapshot(id, name);
    });
    return { status: 'deleted' as const, snapshot_name: name };
  }

  async rollback(customerId: string, id: string, name: string) {
    await this.whileStopped(customerId, id, 'roll back', async (repo) => {
      if (!(await repo.snapshot(id, name))) throw vpsErrors.snapshotNotFound();
      await this.driver.rollback(id, name);
    });
    return {
      status: 'rolling_back' as const,
      snapshot_name: name,
      message: `The disk is put back as it was at snapshot ${name}; data written since is gone.`,
    };
  }

  /**
   * A login for one console terminal connection: `publicKey` (made for that connection) is added
   * to the running server's login user, and taken out again by the grant's `revoke`. Another
   * customer's server is `vps_not_found`; a driver whose servers do not really run has nothing to
   * log in to.
   */
  async grantTerminalLogin(customerId: string, id: string, publicKey: string): Promise<LoginGrant> {
    const s = settle(await this.find(customerId, id), this.clock.nowMs());
    const keys = this.driver as VpsDriver & Partial<LoginKeys>;
    if (this.driver.simulated || !keys.grantLogin) throw vpsErrors.terminalUnavailable();
    if (s.status !== 'running') throw vpsErrors.invalidState('open a terminal on', s.status, ['running']);
    return keys.grantLogin(id, publicKey);
  }

  /** `vm_count` of the account's SSH keys: servers that carry each key. */
  keyUsage(customerId: string, fingerprints: string[]) {
    return this.repo.keyUsage(customerId, fingerprints);
  }

  private maxSnapshots(): number {
    return this.limits.of('vps.snapshots_per_server', 'free') ?? 10;
  }

  private async find(customerId: string, id: string) {
    const row = await this.repo.server(customerId, id);
    if (!row) throw vpsErrors.notFound();
    return row;
  }

  private async whileStopped(
    customerId: string,
    id: string,
    action: string,
    work: (repo: VpsRepo) => Promise<void>,
  ) {
    await this.store.unitOfWork({ locks: [`vps:server:${id}`] }, async ({ tx }) => {
      const repo = VpsRepo.over(tx);
      const row = await repo.server(customerId, id);
      if (!row) throw vpsErrors.notFound();
      const s = settle(row, this.clock.nowMs());
      if (s.action === 'restore') throw vpsErrors.restoreInProgress(s.status);
      if (s.status !== 'stopped') throw vpsErrors.invalidState(action, s.status, ['stopped']);
      await work(repo);
    });
  }

  private async move(
    customerId: string,
    id: string,
    action: 'start' | 'stop' | 'reboot',
    from: VpsStatus[],
    during: VpsStatus,
    run: (spec: ServerSpec) => Promise<ActionTiming>,
    to: VpsStatus = 'running',
  ) {
    let ready: Promise<void> | undefined;
    await this.store.unitOfWork({ locks: [`vps:server:${id}`] }, async ({ tx }) => {
      const repo = VpsRepo.over(tx);
      const row = await repo.server(customerId, id);
      if (!row) throw vpsErrors.notFound();
      const now = this.clock.nowMs();
      const s = settle(row, now);
      if (s.action === 'restore') throw vpsErrors.restoreInProgress(s.status);
      if (!from.includes(s.status as VpsStatus)) throw vpsErrors.invalidState(action, s.status, from);
      const timing = await run(await repo.specOf(s));
      const seconds = timing.seconds;
      ready = quiet(timing.ready);
      await repo.updateServer(id, {
        status: during,
        next_status: to,
        settles_at: now + seconds * 1000,
        action,
        running_since: null,
      });
    });
    settleWhenReady(this.store, this.clock, this.log, id, action, ready);
    const verb = { start: 'starting', stop: 'stopping', reboot: 'rebooting' }[action];
    return { success: true, action, message: `The server is ${verb}.` };
  }
}
