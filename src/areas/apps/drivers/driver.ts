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
  revisionId: string;
  /** The first label of the app's host name, which the ingress routes by. */
  hostLabel: string;
  image: string;
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
}

/**
 * How a deploy ends, and after how many seconds on the kernel clock: the service moves the
 * revision's state when that time is up, so a driver never writes the database.
 */
export type DeployOutcome =
  | { healthy: true; seconds: number }
  | { healthy: false; seconds: number; reason: string };

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
  /** Stops a revision's instances (it no longer serves). */
  retire(appId: string, revisionId: string): Promise<void>;
  /** Stops everything of the app and frees what it holds. */
  destroy(appId: string): Promise<void>;
}
