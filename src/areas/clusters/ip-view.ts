import { isoOf } from '../../kernel/clock.js';
import { dailyPrices, regionOf } from './catalogue.js';
import type { K8sClustersTable, K8sIpsTable } from './migrations.js';

/** The plan a floating address is billed by, per started day. */
export const FLOATING_IP_PLAN = 'k8s-ip-floating';

/** A cluster's public addresses: the gateway (included in the cluster fee), then floating ones. */
export function publicIps(row: K8sClustersTable, runningSince: number, ips: K8sIpsTable[]) {
  const multiplier = regionOf(row.region)?.price_multiplier ?? 1;
  return [
    {
      id: `${row.id}-gw`,
      address: row.gateway_ip,
      family: 'IPv4',
      kind: 'gateway',
      included: true,
      ptr_record: null,
      allocated_at: isoOf(runningSince),
      daily_price: null,
    },
    ...ips.filter((ip) => ip.cluster_id === row.id).map((ip) => floatingIpView(ip, multiplier)),
  ];
}

export function floatingIpView(ip: K8sIpsTable, multiplier: number) {
  return {
    id: ip.id,
    address: ip.address,
    family: 'IPv4',
    kind: 'floating',
    included: false,
    ptr_record: ip.ptr_record,
    allocated_at: isoOf(ip.allocated_at),
    daily_price: dailyPrices(FLOATING_IP_PLAN, multiplier),
  };
}
