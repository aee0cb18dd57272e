import type { Readable } from 'node:stream';
import type { VpsPlan } from '../catalogue.js';

/** What a driver is told about a server. */
export interface ServerSpec {
  id: string;
  /** The owner: a real driver keeps each customer's servers on a network of their own. */
  customerId: string;
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
 * How long an action takes. A driver that really runs servers also hands back `ready`, which
 * settles when the work is done (the server answers on port 22, or is down): the service then
 * ends the move at once, and `seconds` is only the bound after which it ends regardless (a
 * driver that does not finish in time leaves the server in its next state, logged).
 */
export interface ActionTiming {
  seconds: number;
  ready?: Promise<void>;
}

/** A server the database knows, as the driver is told at start-up to adopt or clean what is left. */
export interface KnownServer {
  spec: ServerSpec;
  /** Whether the server should be up (running, starting, provisioning). */
  up: boolean;
}

/**
 * A back end that runs virtual servers. Each action starts the work and says how many seconds
 * it takes; the service moves the server's state on the kernel clock when that time is up (or
 * when `ready` settles), so a driver never writes the database. `namespace` (real servers on
 * this machine) and a future `qemu` driver fit the same seam.
 */
export interface VpsDriver {
  readonly name: string;
  readonly simulated: boolean;
  /** Whether this install can run servers of the template (the others are listed unavailable). */
  offers(osTemplate: string): boolean;
  provision(spec: ServerSpec): Promise<ActionTiming & { ipv4: string; ipv6: string }>;
  start(spec: ServerSpec): Promise<ActionTiming>;
  stop(spec: ServerSpec): Promise<ActionTiming>;
  reboot(spec: ServerSpec): Promise<ActionTiming>;
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
  /**
   * At start-up (role `api`): adopt the servers a previous run left running, boot those that
   * should be up and are not, and remove everything of servers the database no longer knows.
   */
  recover?(known: KnownServer[]): Promise<void>;
  /** Fjord is stopping: shut every server down gracefully, or let them run (FJORD_VPS_ON_STOP). */
  shutdown?(): Promise<void>;
  /** Emulator reset: every server and its disk are gone. */
  destroyAll?(): Promise<void>;
}

/**
 * A one-connection login to a running server: where its sshd is reached from Fjord, as whom,
 * and how to take the key back when the connection ends.
 */
export interface LoginGrant {
  host: string;
  port: number;
  user: string;
  /** Removes the key from the server; safe to call more than once. */
  revoke(): Promise<void>;
}

/** What a driver whose servers really run can do for the console's terminal. */
export interface LoginKeys {
  /** Adds `publicKey` to the login user's authorized keys inside the running server. */
  grantLogin(id: string, publicKey: string): Promise<LoginGrant>;
}
