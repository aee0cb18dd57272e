import type { Readable } from 'node:stream';
import type { VpsPlan } from '../catalogue.js';

/** What a driver is told about a server. */
export interface ServerSpec {
  id: string;
  hostname: string;
  plan: VpsPlan;
  osTemplate: string;
  publicKeys: string[];
}

/** Runtime figures of a running server. */
export interface ServerMetrics {
  cpu_usage_percent: number;
  memory_usage_percent: number;
  disk_usage_percent: number;
  network_in_bytes: number;
  network_out_bytes: number;
}

/**
 * A back end that runs virtual servers. Each action starts the work and says how many seconds
 * it takes; the service moves the server's state on the kernel clock when that time is up, so a
 * driver never writes the database. `namespace` (containers on this machine) and a future
 * `qemu` driver fit the same seam.
 */
export interface VpsDriver {
  readonly name: string;
  readonly simulated: boolean;
  /** Whether this install can run servers of the template (the others are listed unavailable). */
  offers(osTemplate: string): boolean;
  provision(spec: ServerSpec): Promise<{ seconds: number; ipv4: string; ipv6: string }>;
  start(spec: ServerSpec): Promise<{ seconds: number }>;
  stop(spec: ServerSpec): Promise<{ seconds: number }>;
  reboot(spec: ServerSpec): Promise<{ seconds: number }>;
  destroy(id: string): Promise<void>;
  /** Figures at `nowMs` for a server running since `runningSinceMs`. */
  metrics(id: string, runningSinceMs: number, nowMs: number, plan: VpsPlan): Promise<ServerMetrics>;
  /** Keeps the server's disk as it is now; answers the snapshot's size in bytes. */
  snapshot(id: string, name: string): Promise<number>;
  /** Puts the disk back as it was at the snapshot. */
  rollback(id: string, name: string): Promise<void>;
  deleteSnapshot(id: string, name: string): Promise<void>;
  /**
   * A gzip-compressed tar of the server's disk: `fjord-backup.json` (what the archive is, which
   * server) then the disk's files under `disk/`. Taken while running (crash-consistent, like a
   * power cut) or stopped. The stream ends with an error when reading the disk fails.
   */
  backup(spec: ServerSpec): Promise<Readable>;
  /**
   * Replaces the (stopped) server's disk with the archive's. An archive that is damaged or not
   * this server's is refused before anything on the disk changes.
   */
  restore(spec: ServerSpec, archive: Readable): Promise<void>;
}
