import { isoOf } from '../../kernel/clock.js';
import { planOf, regionOf, TRIAL_DAYS, TRIAL_PLANS } from './catalogue.js';
import type { ClusterDriver } from './drivers/driver.js';
import { publicIps } from './ip-view.js';
import { phaseOf, versionOf } from './lifecycle.js';
import type { K8sClustersTable, K8sIpsTable } from './migrations.js';
import type { PoolInput } from './service.js';

/** The port the cluster's API server answers on, at its gateway address. */
export const API_PORT = 7443;
const DAY_MS = 86_400_000;

/** A node pool as stored in the cluster row. */
export interface StoredPool extends PoolInput {
  id: string;
  /** The last change: nodes before it, and when it ends (nodes drained or joined). */
  from_count?: number;
  change_ends_at?: number;
}

/** A cluster as the API shows it at `now`: its phase, pools and addresses follow from the row. */
export function clusterView(row: K8sClustersTable, ips: K8sIpsTable[], now: number, driver: ClusterDriver) {
  const phase = phaseOf(row, now);
  const region = regionOf(row.region)!;
  const running = phase.running_since !== null;
  const pools = JSON.parse(row.node_pools) as StoredPool[];
  return {
    id: row.id,
    name: row.name,
    technical_name: row.technical_name,
    region: row.region,
    region_name: region.name,
    region_city: region.city,
    plan_code: row.plan_code,
    version: versionOf(row, now),
    status: phase.status,
    status_message:
      driver.statusMessage(phase.status, phase.provisioning_step) +
      (row.fault && row.fault_message ? ` (${row.fault_message})` : ''),
    provisioning_step: phase.provisioning_step,
    api_endpoint: running ? `${row.gateway_ip}:${API_PORT}` : null,
    api_ip_filter: JSON.parse(row.api_ip_filter) as string[],
    oidc_enabled: false,
    network_cidr: row.network_cidr,
    node_pools: pools.map((p) => {
      const plan = planOf(p.plan_code)!;
      return {
        id: p.id,
        name: p.name,
        plan_code: p.plan_code,
        count: p.count,
        status: poolStatus(p, running, now),
        cpu_cores: plan.cpu_cores,
        ram_mb: plan.ram_mb,
        disk_gb: plan.disk_gb,
        nodes_seen: !running ? 0 : changing(p, now) ? p.from_count! : p.count,
        labels: p.labels ?? {},
        taints: p.taints ?? [],
      };
    }),
    public_ips: running ? publicIps(row, phase.running_since!, ips) : [],
    ssh_key_ids: JSON.parse(row.ssh_key_ids) as string[],
    created_at: isoOf(row.created_at)!,
    running_since: isoOf(phase.running_since),
    trial_ends_at:
      running && TRIAL_PLANS.has(row.plan_code) ? isoOf(phase.running_since! + TRIAL_DAYS * DAY_MS) : null,
    delete_requested_at: isoOf(row.delete_requested_at),
  };
}

export const changing = (p: StoredPool, now: number) =>
  p.change_ends_at !== undefined && now < p.change_ends_at;
export function poolStatus(p: StoredPool, running: boolean, now: number): string {
  if (!running) return 'pending';
  if (!changing(p, now)) return 'ready';
  return p.count < p.from_count! ? 'draining' : 'scaling';
}
