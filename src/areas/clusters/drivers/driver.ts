/**
 * What a Kubernetes back end does for Fjord. Only the simulated driver exists: no control plane
 * can run on the hosts Fjord is built on, so the lifecycle is modelled on the clock and every
 * answer says it is simulated.
 */
export interface ClusterDriver {
  readonly name: string;
  readonly simulated: boolean;
  /** The gateway (outbound) IPv4 a new cluster gets. */
  gatewayAddress(clusterId: string): string;
  /** The status message shown next to the state. */
  statusMessage(status: string, step: string | null): string;
}

export class SimulatedClusterDriver implements ClusterDriver {
  readonly name = 'simulated';
  readonly simulated = true;

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
}
