import type { Logger } from 'pino';
import type { Principal } from '../../kernel/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import { ResolverError } from '../../kernel/net/resolver.js';
import type { Store } from '../../kernel/store/store.js';
import { regionOf } from './catalogue.js';
import type { ClusterDriver } from './drivers/driver.js';
import { clusterErrors } from './errors.js';
import type { ForwardDns } from './forward-dns.js';
import { FLOATING_IP_PLAN, floatingIpView } from './ip-view.js';
import { DELETE_SECONDS, phaseOf, serves } from './lifecycle.js';
import type { K8sClustersTable } from './migrations.js';
import { ClusterRepo } from './repo.js';
import type { ReverseZones } from './reverse-dns.js';
import { actorOf, customerLock, historyEntry, presentCluster } from './service.js';

/** Floating addresses are unique across every account: allocations take this lock too. */
const POOL_LOCK = 'k8s:floating-ips';
const HOSTNAME =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** A cluster's public addresses: floating IPv4 allocation, release, and reverse DNS. */
export class ClusterIpService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limits: Limits,
    private readonly driver: ClusterDriver,
    private readonly forward: ForwardDns,
    private readonly reverse: ReverseZones,
    private readonly log: Logger,
  ) {}

  async allocate(principal: Principal, id: string) {
    const now = this.clock.nowMs();
    const view = await this.store.unitOfWork(
      { locks: [customerLock(principal.customerId), POOL_LOCK] },
      async ({ tx }) => {
        const repo = ClusterRepo.over(tx);
        const row = await runningCluster(repo, principal.customerId, id, now, 'allocating an address');
        const held = await repo.ipsOf([id]);
        const max = this.limits.of('kubernetes.floating_ips_per_cluster');
        if (max !== null && held.length >= max) throw clusterErrors.ipLimit(max);
        const inUse = await repo.addressesInUse(now - DELETE_SECONDS * 1000);
        const address = await this.driver.allocateAddress({ clusterId: id, region: row.region, inUse });
        const ip = {
          id: newId(),
          cluster_id: id,
          customer_id: row.customer_id,
          address,
          ptr_record: null,
          allocated_at: now,
        };
        await repo.insertIp(ip);
        const view = floatingIpView(ip, multiplierOf(row));
        await repo.record(
          historyEntry(
            id,
            actorOf(principal),
            'cluster.ip.allocate',
            { address, plan_code: FLOATING_IP_PLAN, daily_price: view.daily_price },
            now,
          ),
        );
        return view;
      },
    );
    // A PTR a former holder of the address left in Fjord's reverse zone goes now.
    await this.serve(view.address, null);
    return view;
  }

  /** Mirrors a PTR into Fjord's reverse zone; the address's own record is already committed. */
  private async serve(address: string, name: string | null) {
    try {
      await this.reverse.setPtr(address, name);
    } catch (err) {
      this.log.warn({ err, address }, 'PTR record not written to the reverse zone');
    }
  }

  async release(principal: Principal, id: string, address: string) {
    const now = this.clock.nowMs();
    const hadPtr = await this.store.unitOfWork(
      { locks: [customerLock(principal.customerId), POOL_LOCK] },
      async ({ tx }) => {
        const repo = ClusterRepo.over(tx);
        const row = await runningCluster(repo, principal.customerId, id, now, 'releasing an address');
        if (address === row.gateway_ip)
          throw clusterErrors.invalid(
            'The gateway address is part of the cluster; only floating addresses can be released.',
            '/params/ip',
          );
        const ip = (await repo.ipsOf([id])).find((x) => x.address === address);
        if (!ip) throw clusterErrors.notFound('IP address');
        await this.driver.releaseAddress({ clusterId: id, address });
        await repo.deleteIp(ip.id);
        await repo.record(
          historyEntry(
            id,
            actorOf(principal),
            'cluster.ip.release',
            { address, ptr_record: ip.ptr_record },
            now,
          ),
        );
        return ip.ptr_record !== null;
      },
    );
    if (hadPtr) await this.serve(address, null);
  }

  /**
   * Sets the reverse-DNS name of a floating address (null removes it). The name must already
   * resolve forward to the address (forward-confirmed reverse DNS), checked before anything changes.
   */
  async setPtr(principal: Principal, id: string, address: string, ptr: string | null) {
    // Cheap refusals first (404, the gateway, bad names), then the lookup, outside any unit.
    await this.floatingOf(principal.customerId, id, address);
    const name = ptr === null ? null : ptr.trim().toLowerCase().replace(/\.$/, '');
    if (name !== null) {
      if (!HOSTNAME.test(name) || !name.includes('.'))
        throw clusterErrors.invalid(
          'ptr_record is a host name such as mail.example.com (labels of letters, digits and hyphens).',
          '/body/ptr_record',
        );
      let addresses: string[];
      try {
        addresses = await this.forward.a(name);
      } catch (err) {
        if (!(err instanceof ResolverError)) throw err;
        throw clusterErrors.ptrNotConfirmed(name, address, `the lookup failed (${err.code}); try again`);
      }
      if (!addresses.includes(address))
        throw clusterErrors.ptrNotConfirmed(
          name,
          address,
          addresses.length > 0 ? `it resolves to ${addresses.join(', ')}` : 'it has no A record',
        );
    }
    const now = this.clock.nowMs();
    const view = await this.store.unitOfWork(
      { locks: [customerLock(principal.customerId)] },
      async ({ tx }) => {
        const repo = ClusterRepo.over(tx);
        const row = await runningCluster(repo, principal.customerId, id, now, 'setting reverse DNS');
        const ip = (await repo.ipsOf([id])).find((x) => x.address === address);
        if (!ip) throw clusterErrors.notFound('IP address');
        await this.driver.setReverseDns({ address, name });
        await repo.setPtr(ip.id, name);
        await repo.record(
          historyEntry(
            id,
            actorOf(principal),
            'cluster.ip.ptr',
            { address, ptr_record: name, previous: ip.ptr_record },
            now,
          ),
        );
        return floatingIpView({ ...ip, ptr_record: name }, multiplierOf(row));
      },
    );
    await this.serve(address, name);
    return view;
  }

  private async floatingOf(customerId: string, id: string, address: string) {
    const repo = ClusterRepo.of(this.store);
    const now = this.clock.nowMs();
    const row = await runningCluster(repo, customerId, id, now, 'setting reverse DNS');
    if (address === row.gateway_ip)
      throw clusterErrors.invalid(
        'Reverse DNS is not available on the gateway address; allocate a floating address for it.',
        '/params/ip',
      );
    const ip = (await repo.ipsOf([id])).find((x) => x.address === address);
    if (!ip) throw clusterErrors.notFound('IP address');
    return ip;
  }
}

const multiplierOf = (row: K8sClustersTable) => regionOf(row.region)?.price_multiplier ?? 1;

async function runningCluster(repo: ClusterRepo, customerId: string, id: string, now: number, op: string) {
  const row = await presentCluster(repo, customerId, id, now);
  const status = phaseOf(row, now).status;
  if (!serves(status)) throw clusterErrors.notReady(status, op);
  return row;
}
