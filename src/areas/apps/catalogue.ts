/** Instance sizes of container apps: a revision's plan caps each instance's CPU, memory and processes. */
export interface AppPlan {
  plan_code: string;
  name: string;
  cpu: number;
  memory_mb: number;
  /** Processes and threads an instance may have at once (its pids cgroup limit): a fork bomb stops there. */
  max_processes: number;
}

export const APP_PLANS: readonly AppPlan[] = [
  { plan_code: 'micro', name: '0.25 vCPU / 256 MB', cpu: 0.25, memory_mb: 256, max_processes: 128 },
  { plan_code: 'small', name: '0.5 vCPU / 512 MB', cpu: 0.5, memory_mb: 512, max_processes: 256 },
  { plan_code: 'medium', name: '1 vCPU / 1 GB', cpu: 1, memory_mb: 1024, max_processes: 512 },
  { plan_code: 'large', name: '2 vCPU / 2 GB', cpu: 2, memory_mb: 2048, max_processes: 1024 },
];

export const appPlanOf = (code: string) => APP_PLANS.find((p) => p.plan_code === code.trim().toLowerCase());

/** The domain app hosts live under: `https://<name>-<account short id>.<APPS_DOMAIN>`. */
export const APPS_DOMAIN = 'apps.fjord.test';

/** The region kind container apps are offered under in the region catalogue. */
export const REGION_SERVICE = 'container-apps';

export const DEFAULTS = {
  port: 8080,
  plan_code: 'micro',
  concurrency: 80,
  min_instances: 0,
  max_instances: 3,
  idle_timeout_seconds: 300,
  health_check: { path: '/', interval_seconds: 5, timeout_seconds: 2, failure_threshold: 3 },
} as const;
