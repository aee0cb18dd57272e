/**
 * A namespace server's metrics, read from the host: CPU time and memory from its cgroups, bytes
 * through its veth, and what its disk image holds. CPU use is the time used since the previous
 * reading (or since the server's launch) over the wall time between, per vCPU of the plan.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { VpsPlan } from '../../catalogue.js';
import type { ServerMetrics } from '../driver.js';
import { diskUsed } from './disk-image.js';
import { cgroupUsage, vethCounters } from './host.js';

export class ServerMetricsReader {
  private readonly cpuSamples = new Map<string, { ns: number; at: number }>();

  /** Forgets the server's previous reading (it was launched again, or removed). */
  forget(id: string): void {
    this.cpuSamples.delete(id);
  }

  /** `dir` is the server's directory (its `pid` file dates the launch); `slot` its network slot. */
  async read(id: string, dir: string, slot: number | null, plan: VpsPlan): Promise<ServerMetrics> {
    const usage = await cgroupUsage(id);
    const at = Date.now();
    const last = this.cpuSamples.get(id);
    this.cpuSamples.set(id, { ns: usage.cpuNs, at });
    const started = (await stat(join(dir, 'pid')).catch(() => null))?.mtimeMs ?? at - 1000;
    const base = last ?? { ns: 0, at: started };
    const wallNs = Math.max(1, (at - base.at) * 1e6);
    const cpu = ((usage.cpuNs - base.ns) / wallNs / plan.vcpus) * 100;
    const disk = await diskUsed(dir);
    const net = slot !== null ? await vethCounters(slot) : { in: 0, out: 0 };
    const round1 = (x: number) => Math.round(Math.min(100, Math.max(0, x)) * 10) / 10;
    return {
      cpu_usage_percent: round1(cpu),
      memory_usage_percent: round1((usage.memoryBytes / (plan.ram_gb * 1024 ** 3)) * 100),
      disk_usage_percent: round1((disk / (plan.storage_gb * 1024 ** 3)) * 100),
      network_in_bytes: net.in,
      network_out_bytes: net.out,
    };
  }
}
