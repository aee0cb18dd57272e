import type { Limits } from '../../kernel/limits/quotas.js';
import type { SecretBox } from '../../kernel/secrets.js';
import { appPlanOf, DEFAULTS } from './catalogue.js';
import type { HealthCheck } from './drivers/driver.js';
import { appsErrors } from './errors.js';
import type { AppsRevisionsTable } from './migrations.js';
import type { RevisionInput } from './service.js';

/** The revision input with its image resolved to a reference (and the upload it came from). */
export type SettingsInput = Omit<RevisionInput, 'image'> & {
  image?: string;
  image_upload_id?: string | null;
};

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_ENV = 100;
const parse = <T>(json: string | null): T | null => (json === null ? null : (JSON.parse(json) as T));

/** The revision's settings: the input's, else the latest revision's, else the defaults; validated. */
export function revisionSettings(
  secrets: SecretBox,
  limits: Limits,
  input: SettingsInput,
  latest: AppsRevisionsTable | undefined,
  tier: string,
) {
  const pick = <T>(v: T | undefined, prev: T | undefined, def: T): T =>
    v !== undefined ? v : prev !== undefined ? prev : def;
  const planCode = pick(input.plan_code, latest?.plan_code, DEFAULTS.plan_code);
  const plan = appPlanOf(planCode);
  if (!plan) throw appsErrors.unknownPlan(planCode);
  const env = pick(input.env, latest ? parse<Record<string, string>>(latest.env)! : undefined, {});
  let secretsSealed: string | null;
  let secretNames: string[];
  if (input.secrets !== undefined) {
    secretNames = Object.keys(input.secrets).sort();
    secretsSealed = secretNames.length ? secrets.seal(JSON.stringify(input.secrets)) : null;
  } else {
    secretNames = latest ? parse<string[]>(latest.secret_names)! : [];
    secretsSealed = latest?.secrets_sealed ?? null;
  }
  for (const [where, names] of [
    ['/body/env', Object.keys(env)],
    ['/body/secrets', secretNames],
  ] as const) {
    const bad = names.find((n) => !ENV_NAME.test(n));
    if (bad) throw appsErrors.badEnv(`${where}/${bad}`, `${bad} is not an environment variable name.`);
  }
  const both = secretNames.find((n) => n in env);
  if (both) throw appsErrors.badEnv(`/body/secrets/${both}`, `${both} is both in env and in secrets.`);
  if (Object.keys(env).length + secretNames.length > MAX_ENV)
    throw appsErrors.badEnv('/body/env', `At most ${MAX_ENV} variables in env and secrets together.`);
  const min = pick(input.min_instances, latest?.min_instances, DEFAULTS.min_instances);
  const max = pick(input.max_instances, latest?.max_instances, DEFAULTS.max_instances);
  const allowed = limits.of('apps.max_instances', tier);
  if (allowed !== null && max > allowed) throw appsErrors.maxInstances(allowed);
  if (min > max) throw appsErrors.badScaling();
  const prevHc = latest ? parse<HealthCheck>(latest.health_check)! : undefined;
  const healthCheck: HealthCheck = { ...DEFAULTS.health_check, ...prevHc, ...input.health_check };
  return {
    image: pick(input.image, latest?.image, ''),
    imageUploadId:
      input.image !== undefined ? (input.image_upload_id ?? null) : (latest?.image_upload_id ?? null),
    command: pick(input.command, latest ? parse<string[]>(latest.command) : undefined, null),
    args: pick(input.args, latest ? parse<string[]>(latest.args) : undefined, null),
    port: pick(input.port, latest?.port, DEFAULTS.port),
    env,
    secretsSealed,
    secretNames,
    plan,
    concurrency: pick(input.concurrency, latest?.concurrency, DEFAULTS.concurrency),
    min,
    max,
    idle: pick(input.idle_timeout_seconds, latest?.idle_timeout_seconds, DEFAULTS.idle_timeout_seconds),
    healthCheck,
  };
}
