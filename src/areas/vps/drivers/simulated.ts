import { createHash } from 'node:crypto';
import type { VpsPlan } from '../catalogue.js';
import type { ServerMetrics, ServerSpec, VpsDriver } from './driver.js';

/** A number in [0, 1) fixed by the text: the same server always gets the same timings and figures. */
function unit(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0) / 2 ** 32;
}
const between = (text: string, low: number, high: number) => Math.round(low + unit(text) * (high - low));

/**
 * Runs no server at all: for hosts that cannot make namespaces. Timings are the published ones
 * (provisioning 1-3 minutes, start 30-60 s, reboot 1-2 minutes, stop 10-30 s), chosen per server
 * from its id so tests can rely on them; metrics are plausible curves of the server's id and
 * uptime. Addresses come from the documentation ranges (203.0.113.0/24, 2001:db8::/32), which
 * route nowhere, so nobody mistakes them for a reachable server.
 */
export class SimulatedVpsDriver implements VpsDriver {
  readonly name = 'simulated';
  readonly simulated = true;

  offers(): boolean {
    return true;
  }
  async provision(spec: ServerSpec) {
    const n = between(`${spec.id}:ip`, 2, 254);
    return {
      seconds: between(`${spec.id}:provision`, 60, 180),
      ipv4: `203.0.113.${n}`,
      ipv6: `2001:db8::${n.toString(16)}`,
    };
  }
  async start(spec: ServerSpec) {
    return { seconds: between(`${spec.id}:start`, 30, 60) };
  }
  async stop(spec: ServerSpec) {
    return { seconds: between(`${spec.id}:stop`, 10, 30) };
  }
  async reboot(spec: ServerSpec) {
    return { seconds: between(`${spec.id}:reboot`, 60, 120) };
  }
  async destroy(): Promise<void> {}
  async metrics(id: string, since: number, now: number, plan: VpsPlan): Promise<ServerMetrics> {
    const up = Math.max(0, (now - since) / 1000);
    const minute = Math.floor(now / 60_000);
    const wave = unit(`${id}:${minute}`);
    const round1 = (x: number) => Math.round(x * 10) / 10;
    return {
      cpu_usage_percent: round1(2 + wave * 18),
      memory_usage_percent: round1(20 + unit(`${id}:mem`) * 30 + wave * 5),
      disk_usage_percent: round1(Math.min(95, 5 + unit(`${id}:disk`) * 10 + up / 86_400 / plan.storage_gb)),
      network_in_bytes: Math.floor(up * (2_000 + unit(`${id}:in`) * 8_000)),
      network_out_bytes: Math.floor(up * (1_000 + unit(`${id}:out`) * 4_000)),
    };
  }
  async snapshot(id: string, name: string): Promise<number> {
    return between(`${id}:snap:${name}`, 400_000_000, 1_200_000_000);
  }
  async rollback(): Promise<void> {}
  async deleteSnapshot(): Promise<void> {}
}
