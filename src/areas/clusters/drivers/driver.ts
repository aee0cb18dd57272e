import { clusterErrors } from '../errors.js';

/**
 * What a Kubernetes back end does for Fjord. Only the simulated driver exists: no control plane
 * can run on the hosts Fjord is built on, so the lifecycle is modelled on the clock and every
 * answer says it is simulated. A real driver (Cluster API, Gardener, a provider's API) implements
 * the same operations; it throws `clusterErrors.capacity` when the provider has no room and
 * `clusterErrors.backend` when the provider fails.
 */
export interface ClusterDriver {
  readonly name: string;
  readonly simulated: boolean;
  /** The gateway (outbound) IPv4 a new cluster gets. */
  gatewayAddress(clusterId: string): string;
  /** The status message shown next to the state. */
  statusMessage(status: string, step: string | null): string;
  /**
   * A public IPv4 for the cluster's `floating` addresses. `inUse` holds every address Fjord has
   * handed out and not released (a provider's driver may ignore it: its API picks the address).
   */
  allocateAddress(input: { clusterId: string; region: string; inUse: ReadonlySet<string> }): Promise<string>;
  /** Gives a floating address back to the pool. */
  releaseAddress(input: { clusterId: string; address: string }): Promise<void>;
  /** Sets (or with null removes) the reverse-DNS name of an address at the provider. */
  setReverseDns(input: { address: string; name: string | null }): Promise<void>;
  /** Starts a backup of the cluster's resources (Velero-style); how long it takes and what it holds. */
  startBackup(input: {
    clusterId: string;
    namespaces: string[] | null;
    includeVolumes: boolean;
  }): Promise<{ seconds: number; itemsCount: number }>;
  /** Starts restoring a backup into the same cluster; how long it takes. */
  startRestore(input: {
    clusterId: string;
    backup: string;
    namespaces: string[] | null;
    includeVolumes: boolean;
  }): Promise<{ seconds: number }>;
}

/** Every host address of IPv4 CIDRs, network and broadcast addresses left out. */
function hostsOf(cidrs: string[]): string[] {
  const out: string[] = [];
  for (const cidr of cidrs) {
    const [base, bitsText] = cidr.split('/') as [string, string];
    const start = base.split('.').reduce((a, o) => a * 256 + Number(o), 0);
    const size = 2 ** (32 - Number(bitsText));
    for (let i = 1; i < size - 1; i++) {
      const v = start + i;
      out.push([24, 16, 8, 0].map((s) => Math.floor(v / 2 ** s) % 256).join('.'));
    }
  }
  return out;
}

/** Simulated objects in a customer namespace, and seconds per step, for backup and restore. */
const ITEMS_PER_NAMESPACE = 12;
const ITEMS_ALL_NAMESPACES = 48;
const BACKUP_SECONDS = 30;
const RESTORE_SECONDS = 60;
const VOLUME_SECONDS = 60;

export class SimulatedClusterDriver implements ClusterDriver {
  readonly name = 'simulated';
  readonly simulated = true;
  private readonly floating: string[];

  /** Floating addresses come from TEST-NET-2 and TEST-NET-1 (RFC 5737): 508 in all. */
  constructor(opts: { floatingRanges?: string[] } = {}) {
    this.floating = hostsOf(opts.floatingRanges ?? ['198.51.100.0/24', '192.0.2.0/24']);
  }

  /** Addresses from TEST-NET-3 (RFC 5737): they are never routed, like the clusters behind them. */
  gatewayAddress(clusterId: string): string {
    let h = 0;
    for (const ch of clusterId) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
    return `203.0.113.${(h % 254) + 1}`;
  }

  statusMessage(status: string, step: string | null): string {
    const what = step ? `${status}: ${step}` : status;
    return `Simulated cluster (no Kubernetes control plane runs behind it): ${what}`;
  }

  /** The lowest free address of the pool; none left is `capacity`. */
  async allocateAddress(input: { inUse: ReadonlySet<string> }): Promise<string> {
    const free = this.floating.find((a) => !input.inUse.has(a));
    if (!free) throw clusterErrors.capacity('No floating IPv4 address is free in this region.');
    return free;
  }

  async releaseAddress(): Promise<void> {}

  async setReverseDns(): Promise<void> {}

  async startBackup(input: { namespaces: string[] | null; includeVolumes: boolean }) {
    return {
      seconds: BACKUP_SECONDS + (input.includeVolumes ? VOLUME_SECONDS : 0),
      itemsCount:
        input.namespaces === null ? ITEMS_ALL_NAMESPACES : ITEMS_PER_NAMESPACE * input.namespaces.length,
    };
  }

  async startRestore(input: { includeVolumes: boolean }) {
    return { seconds: RESTORE_SECONDS + (input.includeVolumes ? VOLUME_SECONDS : 0) };
  }
}
