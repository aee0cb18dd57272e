import { createHash } from 'node:crypto';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Principal } from '../../kernel/auth/principal.js';
import { type Clock, isoOf } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { Store } from '../../kernel/store/store.js';
import type { AccountService } from '../account/service.js';
import { DEFAULT_POLICY, takeBackup } from './backup-take.js';
import { type Currency, DEFAULT_REGION, DEFAULT_VERSION, estimate, regionOf, VERSIONS } from './catalogue.js';
import { changing, clusterView, poolStatus, type StoredPool } from './cluster-view.js';
import type { ClusterDriver } from './drivers/driver.js';
import { clusterErrors } from './errors.js';
import { DELETE_SECONDS, phaseOf, serves, timelineOf, versionOf } from './lifecycle.js';
import type { K8sClustersTable, K8sIpsTable } from './migrations.js';
import { ClusterRepo } from './repo.js';
import { checkCidrs, checkClusterName, checkPools, controlPlaneOf, nodePlanOf } from './validation.js';

export interface PoolInput {
  name: string;
  plan_code: string;
  count: number;
  labels?: Record<string, string>;
  taints?: { key: string; value?: string; effect: string }[];
}
export interface ClusterInput {
  name: string;
  region?: string;
  plan_code?: string;
  version?: string;
  node_pools: PoolInput[];
  api_ip_filter?: string[];
  ssh_key_ids?: string[];
}
interface Change {
  patch: Partial<K8sClustersTable>;
  details: object;
}
/** Draining a node (cordon, evict pods) and joining a new one, in seconds. */
export const DRAIN_SECONDS = 60;
export const JOIN_SECONDS = 90;

/** Managed clusters: catalogue, estimates and the cluster lifecycle over a driver. */
export class ClusterService {
  readonly repo: ClusterRepo;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly identity: IdentityService,
    private readonly limits: Limits,
    private readonly account: AccountService,
    readonly driver: ClusterDriver,
  ) {
    this.repo = ClusterRepo.of(store);
  }

  region(code: string | undefined) {
    const r = regionOf(code ?? DEFAULT_REGION);
    if (!r)
      throw clusterErrors.invalid(
        `No region ${code}; GET /v1/kubernetes/regions lists them.`,
        '/body/region',
      );
    return r;
  }

  estimate(input: { plan_code?: string; region?: string; node_pools: PoolInput[]; currency?: string }) {
    const region = this.region(input.region);
    const cp = controlPlaneOf(input.plan_code);
    for (const p of input.node_pools) nodePlanOf(p.plan_code);
    return estimate(cp, input.node_pools, (input.currency ?? 'NOK') as Currency, region.price_multiplier);
  }

  async create(principal: Principal, input: ClusterInput) {
    checkClusterName(input.name);
    const region = this.region(input.region);
    if (!region.kubernetes_available) throw clusterErrors.regionUnavailable(region.code);
    const plan = controlPlaneOf(input.plan_code);
    const version = input.version ?? DEFAULT_VERSION;
    if (!VERSIONS.some((v) => v.version === version))
      throw clusterErrors.invalid(
        `Version ${version} is not offered; GET /v1/kubernetes/versions lists them.`,
        '/body/version',
      );
    const pools = checkPools(input.node_pools);
    const filter = checkCidrs(input.api_ip_filter ?? [], '/body/api_ip_filter');
    const sshKeyIds = [...new Set(input.ssh_key_ids ?? [])];
    if (sshKeyIds.length > 0) {
      const own = new Set((await this.account.listSshKeys(principal.customerId)).map((k) => k.id));
      const missing = sshKeyIds.find((id) => !own.has(id));
      if (missing) throw clusterErrors.invalid(`No SSH key ${missing} on this account.`, '/body/ssh_key_ids');
    }
    const customerPlan = (await this.identity.getCustomer(principal.customerId))?.plan ?? 'free';
    const max = this.limits.of('kubernetes.clusters', customerPlan);
    const now = this.clock.nowMs();
    const id = newId();
    const row: K8sClustersTable = {
      id,
      customer_id: principal.customerId,
      name: input.name,
      technical_name: `k8s-${createHash('sha256').update(id).digest('hex').slice(0, 12)}`,
      region: region.code,
      plan_code: plan,
      version,
      status: 'provisioning',
      api_ip_filter: JSON.stringify(filter),
      network_cidr: '10.240.0.0/16',
      node_pools: JSON.stringify(pools),
      ssh_key_ids: JSON.stringify(sshKeyIds),
      gateway_ip: this.driver.gatewayAddress(id),
      created_at: now,
      delete_requested_at: null,
      upgrade_to: null,
      upgrade_started_at: null,
      fault: null,
      fault_step: null,
      fault_message: null,
      fault_at: null,
    };
    const outOfCapacity = await this.repo.capacityOut(region.code);
    if (outOfCapacity)
      throw clusterErrors.capacity(
        outOfCapacity.message ?? `Region ${region.code} has no capacity for new clusters now.`,
      );
    // Name and count are checked and the row written under the account's lock: two creates at once
    // cannot both take the last place or the same name.
    await this.store.unitOfWork({ locks: [customerLock(principal.customerId)] }, async ({ tx }) => {
      const repo = ClusterRepo.over(tx);
      const present = await repo.present(principal.customerId, now - DELETE_SECONDS * 1000);
      if (present.some((c) => c.name === input.name)) throw clusterErrors.nameTaken(input.name);
      if (max !== null && present.length >= max) throw clusterErrors.quota(customerPlan, max);
      await repo.insert(row);
      await repo.record(
        this.entry(
          id,
          principal,
          'cluster.create',
          { region: region.code, plan_code: plan, version, node_pools: pools.length },
          now,
        ),
      );
    });
    return this.view(row);
  }

  async list(customerId: string) {
    const clusters = await this.repo.present(customerId, this.clock.nowMs() - DELETE_SECONDS * 1000);
    const ips = await this.repo.ipsOf(clusters.map((c) => c.id));
    return { clusters: clusters.map((c) => this.view(c, ips)), total: clusters.length };
  }

  async get(customerId: string, id: string) {
    const row = await this.find(customerId, id);
    return this.view(row, await this.repo.ipsOf([id]));
  }

  async remove(principal: Principal, id: string, confirmName: string) {
    const now = this.clock.nowMs();
    const after = await this.store.unitOfWork(
      { locks: [customerLock(principal.customerId)] },
      async ({ tx }) => {
        const repo = ClusterRepo.over(tx);
        const row = await presentCluster(repo, principal.customerId, id, now);
        if (row.delete_requested_at !== null) throw clusterErrors.notReady('deleting', 'DELETE');
        if (confirmName !== row.name)
          throw clusterErrors.invalid('confirm_name must equal the cluster name.', '/body/confirm_name');
        await repo.update(id, { status: 'deleting', delete_requested_at: now });
        await repo.record(this.entry(id, principal, 'cluster.delete', { final_backup_kept_days: 30 }, now));
        return { row: { ...row, status: 'deleting', delete_requested_at: now }, ips: await repo.ipsOf([id]) };
      },
    );
    return this.view(after.row, after.ips);
  }

  async history(customerId: string, id: string) {
    await this.find(customerId, id);
    const rows = await this.repo.history(id);
    return {
      history: rows.map((h) => ({
        id: h.id,
        action: h.action,
        actor: h.actor,
        at: isoOf(h.at)!,
        details: JSON.parse(h.details),
      })),
    };
  }

  /** The cluster's current (or last) long operation as steps on the clock: see `timelineOf`. */
  async timeline(customerId: string, id: string) {
    const row = await this.find(customerId, id);
    const now = this.clock.nowMs();
    const phase = phaseOf(row, now);
    const t = timelineOf(row, now);
    return {
      status: phase.status,
      operation: t.operation,
      steps: t.steps.map((s) => ({
        name: s.name,
        state: s.state,
        starts_at: isoOf(s.starts_at)!,
        ends_at: isoOf(s.ends_at)!,
      })),
      next_change_in_seconds: t.next_change_in_ms === null ? null : Math.ceil(t.next_change_in_ms / 1000),
    };
  }

  /** The versions an upgrade may move to: the next offered minor version only, as Kubernetes requires. */
  async upgradeTargets(customerId: string, id: string) {
    const row = await this.find(customerId, id);
    return { versions: nextMinor(versionOf(row, this.clock.nowMs())) };
  }

  /** Takes a backup first, then upgrades; `upgrading` until both are done, then `running` on the new version. */
  async upgrade(principal: Principal, id: string, version: string) {
    return this.change(principal, id, 'upgrade', async (row, now, repo) => {
      const current = versionOf(row, now);
      if (!nextMinor(current).includes(version))
        throw clusterErrors.invalid(
          `From ${current} a cluster upgrades to ${nextMinor(current).join(', ') || 'nothing yet'}.`,
          '/body/version',
        );
      // The backup taken first is a real one: listed, restorable, kept as the policy keeps backups.
      // It holds the cluster's resources (volumes are not touched by an upgrade).
      const names = new Set((await repo.backupNames(id)).map((b) => b.name));
      const retention = (await repo.policy(id))?.retention_days ?? DEFAULT_POLICY.retention_days;
      const backup = await takeBackup(
        repo,
        this.driver,
        row,
        'pre-upgrade',
        now,
        null,
        { retention_days: retention, include_volumes: false },
        names,
      );
      return {
        patch: { version: current, upgrade_to: version, upgrade_started_at: now },
        details: {
          from: current,
          to: version,
          backup_first: true,
          backup: backup.id,
          backup_name: backup.name,
        },
      };
    });
  }

  /** Replaces the CIDRs allowed to reach the cluster API; the simulated API server applies them at once. */
  async setApiAccess(principal: Principal, id: string, cidrs: string[]) {
    const checked = checkCidrs(cidrs, '/body/cidrs');
    return this.change(
      principal,
      id,
      'api-access',
      () => ({
        patch: { api_ip_filter: JSON.stringify(checked) },
        details: { cidrs: checked },
      }),
      ['provisioning', 'running'],
    );
  }

  async addPool(principal: Principal, id: string, input: PoolInput) {
    const now = this.clock.nowMs();
    const cluster = await this.change(principal, id, 'node-pool.add', (row) => {
      const pools = JSON.parse(row.node_pools) as StoredPool[];
      const [added] = checkPools([input]);
      if (pools.length >= 8) throw clusterErrors.invalid('A cluster has at most 8 node pools.', '/body');
      if (pools.some((p) => p.name === input.name))
        throw clusterErrors.invalid(`The cluster already has a pool ${input.name}.`, '/body/name');
      const pool = { ...added!, from_count: 0, change_ends_at: now + JOIN_SECONDS * 1000 };
      return {
        patch: { node_pools: JSON.stringify([...pools, pool]) },
        details: { pool: input.name, plan_code: input.plan_code, count: input.count },
      };
    });
    return cluster.node_pools.find((p) => p.name === input.name)!;
  }

  /** Scaling down drains the nodes that go first (`draining`); scaling up waits for new nodes to join. */
  async scalePool(principal: Principal, id: string, poolName: string, count: number) {
    if (!Number.isInteger(count) || count < 0 || count > 16)
      throw clusterErrors.invalid('count is 0-16.', '/body/count');
    const now = this.clock.nowMs();
    const cluster = await this.change(principal, id, 'node-pool.scale', (row) => {
      const pools = JSON.parse(row.node_pools) as StoredPool[];
      const pool = pools.find((p) => p.name === poolName);
      if (!pool) throw clusterErrors.notFound('Node pool');
      if (changing(pool, now)) throw clusterErrors.notReady(poolStatus(pool, true, now), 'scaling this pool');
      const seconds = count < pool.count ? DRAIN_SECONDS : JOIN_SECONDS;
      const next = { ...pool, count, from_count: pool.count, change_ends_at: now + seconds * 1000 };
      return {
        patch: { node_pools: JSON.stringify(pools.map((p) => (p.name === poolName ? next : p))) },
        details: { pool: poolName, from: pool.count, to: count },
      };
    });
    return cluster.node_pools.find((p) => p.name === poolName)!;
  }

  /** Removes a pool (its nodes are drained by the driver); a cluster keeps at least one. */
  async deletePool(principal: Principal, id: string, poolName: string) {
    await this.change(principal, id, 'node-pool.delete', (row) => {
      const pools = JSON.parse(row.node_pools) as StoredPool[];
      if (!pools.some((p) => p.name === poolName)) throw clusterErrors.notFound('Node pool');
      if (pools.length === 1)
        throw clusterErrors.invalid('A cluster keeps at least one node pool.', '/params/pool');
      return {
        patch: { node_pools: JSON.stringify(pools.filter((p) => p.name !== poolName)) },
        details: { pool: poolName },
      };
    });
  }

  /** A state-checked change: read, check, write and record in one unit under the account's lock. */
  private async change(
    principal: Principal,
    id: string,
    op: string,
    decide: (row: K8sClustersTable, now: number, repo: ClusterRepo) => Change | Promise<Change>,
    allowed: string[] = ['running'],
  ) {
    const now = this.clock.nowMs();
    const after = await this.store.unitOfWork(
      { locks: [customerLock(principal.customerId)] },
      async ({ tx }) => {
        const repo = ClusterRepo.over(tx);
        const row = await presentCluster(repo, principal.customerId, id, now);
        const status = phaseOf(row, now).status;
        if (!allowed.includes(status) && !(serves(status) && allowed.includes('running')))
          throw clusterErrors.notReady(status, op);
        const { patch, details } = await decide(row, now, repo);
        await repo.update(id, patch);
        await repo.record(this.entry(id, principal, `cluster.${op}`, details, now));
        return { row: { ...row, ...patch }, ips: await repo.ipsOf([id]) };
      },
    );
    return this.view(after.row, after.ips);
  }

  // --- helpers ----------------------------------------------------------------------------------

  /** The customer's present cluster (404 otherwise), read outside any unit. */
  async find(customerId: string, id: string) {
    const row = (await this.repo.present(customerId, this.clock.nowMs() - DELETE_SECONDS * 1000)).find(
      (c) => c.id === id,
    );
    if (!row) throw clusterErrors.notFound();
    return row;
  }

  private entry(clusterId: string, principal: Principal, action: string, details: object, at: number) {
    return historyEntry(clusterId, actorOf(principal), action, details, at);
  }

  view(row: K8sClustersTable, ips: K8sIpsTable[] = []) {
    return clusterView(row, ips, this.clock.nowMs(), this.driver);
  }
}

/** Offered versions exactly one minor above `current`. */
function nextMinor(current: string): string[] {
  const [major, minor] = current.split('.').map(Number);
  return VERSIONS.map((v) => v.version).filter((v) => v === `${major}.${(minor ?? 0) + 1}`);
}

/** Every change of an account's clusters (and their addresses, backups) is serialised on this. */
export const customerLock = (customerId: string) => `k8s:customer:${customerId}`;

/** Who did it, as history shows it: the credential (`pat:<id>`, `oidc:<id>`) or `system:<job>`. */
export const actorOf = (principal: Principal) => `${principal.credential.kind}:${principal.credential.id}`;

export function historyEntry(clusterId: string, actor: string, action: string, details: object, at: number) {
  return { id: newId(), cluster_id: clusterId, action, actor, details: JSON.stringify(details), at };
}

/** The customer's cluster `id`, unless gone (removed, or deleted longer ago than the removal takes): 404. */
export async function presentCluster(repo: ClusterRepo, customerId: string, id: string, now: number) {
  const row = (await repo.present(customerId, now - DELETE_SECONDS * 1000)).find((c) => c.id === id);
  if (!row) throw clusterErrors.notFound();
  return row;
}
