import type { Readable } from 'node:stream';
import type { AppPlan } from '../catalogue.js';

export interface HealthCheck {
  path: string;
  interval_seconds: number;
  timeout_seconds: number;
  failure_threshold: number;
}

/** What a driver is told about a revision to deploy. Secrets arrive opened, for the process only. */
export interface RevisionSpec {
  appId: string;
  /** The customer the app belongs to: their apps share a network of their own, and no one else's. */
  customerId: string;
  revisionId: string;
  /** The first label of the app's host name, which the ingress routes by. */
  hostLabel: string;
  /** The app's slot of host user ids: its containers' users map to a range no other app has. */
  idSlot: number;
  /** A fully qualified reference the image policy allowed, or an upload's local reference. */
  image: string;
  /** For an uploaded image: its archive, which the runtime loads when the image is not in its store. */
  imageArchive: (() => Promise<Readable>) | null;
  command: string[] | null;
  args: string[] | null;
  port: number;
  env: Record<string, string>;
  secrets: Record<string, string>;
  plan: AppPlan;
  concurrency: number;
  minInstances: number;
  maxInstances: number;
  idleTimeoutSeconds: number;
  healthCheck: HealthCheck;
  /** The app's volumes, mounted into every instance. */
  volumes: VolumeMount[];
}

/** One instance's use, as the runtime measures it. */
export interface InstanceStats {
  instance: string;
  revisionId: string;
  cpuPercent: number | null;
  memoryBytes: number | null;
}

/** A volume of the app and where instances see it. */
export interface VolumeMount {
  id: string;
  mountPath: string;
}

/**
 * How a deploy ends, and after how many seconds on the kernel clock: the service moves the
 * revision's state when that time is up, so a driver never writes the database.
 */
export type DeployOutcome =
  | { healthy: true; seconds: number }
  | { healthy: false; seconds: number; reason: string }
  /** Not known yet: the driver starts it in `launch` and reports the health check's verdict. */
  | { pending: true };

/** One line an instance wrote. */
export interface LogLine {
  time: number;
  revisionId: string;
  /** The instance's id as the API lists it (`<revision id>-<n>`). */
  instance: string;
  stream: 'stdout' | 'stderr';
  text: string;
}

/** Which lines a log read starts with. */
export interface LogWindow {
  /** At most this many of the last lines (per instance when following). */
  tail: number;
  /** Only lines from this time on: RFC 3339, or a duration back from now (`90s`, `5m`, `2h`). */
  since: string | null;
  /** Only this instance (`<revision id>-<n>`), or every instance of the revisions. */
  instance: string | null;
}

/** A health check's verdict on a deploy the driver started in `launch`. */
export type DeployVerdict = { healthy: true } | { healthy: false; reason: string };

/**
 * A back end that runs container apps. `simulated` follows the states on the clock; a `podman`
 * driver runs real containers behind Fjord's ingress through the same seam.
 */
export interface AppsDriver {
  readonly name: string;
  readonly simulated: boolean;
  /** A sentence added to every status_message (e.g. that nothing really runs), or null. */
  readonly note: string | null;
  /** Seconds a new instance takes to pass its health check when a request wakes a scaled-to-zero app. */
  readonly coldStartSeconds: number;
  /** Pulls the image and starts a first instance; says whether and when it passes its health check. */
  deploy(spec: RevisionSpec): Promise<DeployOutcome>;
  /**
   * Starts a deploy whose outcome was `pending`, after its revision is stored; calls `report` once
   * with the health check's verdict. Drivers whose outcomes are timed leave it out.
   */
  launch?(spec: RevisionSpec, report: (verdict: DeployVerdict) => Promise<void>): void;
  /**
   * A running instance's address for the ingress, starting one (a cold start) when none runs;
   * rejects when it does not become healthy. Only drivers with an ingress have it.
   */
  ensureRunning?(spec: RevisionSpec): Promise<{ host: string; port: number }>;
  /**
   * An instance with room for one more request, starting one when all are busy and fewer than
   * `max_instances` run; rejects with AppAtCapacity beyond that. `release` when the answer ends.
   */
  acquire?(spec: RevisionSpec): Promise<{ host: string; port: number; release(): void }>;
  /** Stops extra instances that have been idle (drivers that scale out). */
  trim?(): Promise<void>;
  /** Revisions with instances now (drivers that run something). */
  runningRevisions?(): string[];
  /**
   * At start: keeps (adopts) the instances of `keep` left by an earlier run and removes every
   * other instance this install started.
   */
  adopt?(keep: ReadonlySet<string>): Promise<{ adopted: number; removed: number }>;
  /** Stops what the driver started (not the containers: they are adopted at the next start). */
  close?(): Promise<void>;
  /**
   * The last `lines` lines the revisions' instances wrote, oldest first. Drivers that run nothing
   * leave it out; the service then tells what the deploys did.
   */
  logs?(revisionIds: string[], window: LogWindow): Promise<LogLine[]>;
  /**
   * Calls `onLine` with the window's lines, then with each line the revisions' running instances
   * write, until every one of them has stopped or `signal` aborts; then it has nothing left running.
   * Drivers that run nothing leave it out.
   */
  followLogs?(
    revisionIds: string[],
    window: LogWindow,
    onLine: (line: LogLine) => void,
    signal: AbortSignal,
  ): Promise<void>;
  /** CPU and memory use of the revisions' running instances now (drivers that run something). */
  stats?(revisionIds: string[]): Promise<InstanceStats[]>;
  /** Makes a new volume's storage, of its size (drivers that store data). */
  createVolume?(volumeId: string, sizeGb: number): Promise<void>;
  /** Whether writes past the volume's size fail (false: its size is not enforced). */
  volumeSizeEnforced?(volumeId: string): Promise<boolean>;
  /** Bytes a volume holds now (drivers that store data). */
  volumeUsage?(volumeId: string): Promise<number>;
  /** A gzipped tar of the volume's files (drivers that store data). */
  snapshotVolume?(volumeId: string): Promise<Readable>;
  /** Fills a new volume from a gzipped tar written by `snapshotVolume`. */
  restoreVolume?(volumeId: string, archive: Readable): Promise<void>;
  /** Deletes a volume's data. */
  removeVolume?(volumeId: string): Promise<void>;
  /** Stops a revision's instances (it no longer serves). */
  retire(appId: string, revisionId: string): Promise<void>;
  /** Stops everything of the app and frees what it holds. */
  destroy(appId: string): Promise<void>;
}

/** Every instance of the revision is serving `concurrency` requests and `max_instances` run. */
export class AppAtCapacity extends Error {
  constructor(readonly maxInstances: number) {
    super(`All ${maxInstances} instances are busy.`);
  }
}
