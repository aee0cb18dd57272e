import type { AppsDriver, DeployOutcome, RevisionSpec } from './driver.js';

/** Seconds a simulated deploy takes to pull, start and pass its health check. */
export const SIMULATED_DEPLOY_SECONDS = 10;
export const SIMULATED_COLD_START_SECONDS = 2;

/**
 * Runs no container: for hosts without a container runtime. A deploy is healthy after 10 s on
 * the clock; an image whose reference ends in `:broken` fails its health check after 10 s plus
 * `interval_seconds × failure_threshold`, so tests can watch the previous revision keep serving.
 */
export class SimulatedAppsDriver implements AppsDriver {
  readonly name = 'simulated';
  readonly simulated = true;
  readonly note = 'Simulated: no container runs for this app.';
  readonly coldStartSeconds = SIMULATED_COLD_START_SECONDS;

  async deploy(spec: RevisionSpec): Promise<DeployOutcome> {
    if (spec.image.endsWith(':broken')) {
      const hc = spec.healthCheck;
      return {
        healthy: false,
        seconds: SIMULATED_DEPLOY_SECONDS + hc.interval_seconds * hc.failure_threshold,
        reason: `Health check GET ${hc.path} on port ${spec.port} failed ${hc.failure_threshold} times in a row.`,
      };
    }
    return { healthy: true, seconds: SIMULATED_DEPLOY_SECONDS };
  }
  async retire(): Promise<void> {}
  async destroy(): Promise<void> {}
}
