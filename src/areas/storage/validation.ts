import type { FieldProblem } from '../../kernel/errors.js';
import { randomString } from '../../kernel/ids.js';
import { ACCOUNT_ACTIONS, BUCKET_ACTIONS, LEGACY_REGION_SPELLINGS, STORAGE_REGION } from './catalogue.js';
import type {
  CorsRule,
  LifecycleRule,
  LifecycleTransition,
  NoncurrentVersionTransition,
} from './data-plane-contract.js';
import { storageErrors } from './errors.js';
import { hasTransitions, transitionProblem } from './objects/lifecycle-transitions.js';

/**
 * Rules the request schemas cannot say: CORS origins, unique rule ids, lifecycle rules with at
 * least one action, action names. Each failure names the JSON pointer of the offending field.
 */

/** 3-63 lowercase letters, digits and hyphens, starting and ending with a letter or digit (as S3). */
export const BUCKET_NAME_PATTERN = '^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$';

/**
 * The names S3's CreateBucket takes, as AWS's general purpose bucket rules say: the API's names,
 * and dots too — but not two in a row, not beside a hyphen, not an IP address, and none of the
 * prefixes and suffixes AWS keeps for itself.
 */
export function isS3BucketName(name: string): boolean {
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name)) return false;
  if (/\.\.|\.-|-\./.test(name)) return false;
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(name)) return false;
  if (/^(xn--|sthree-|amzn-s3-demo-)/.test(name)) return false;
  return !/(-s3alias|--ol-s3|\.mrap|--x-s3|--table-s3)$/.test(name);
}

export function normaliseRegion(region: string | undefined): string {
  if (region === undefined || region === STORAGE_REGION) return STORAGE_REGION;
  if (LEGACY_REGION_SPELLINGS.includes(region)) return STORAGE_REGION;
  throw storageErrors.unknownRegion(region);
}

const UPPER_ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
/** 20 upper-case alphanumerics, like an AWS access key id; `FJ` marks it as Fjord's. */
export const newAccessKeyId = (): string => `FJ${randomString(18, UPPER_ALNUM)}`;
/** 40 characters, like an AWS secret; base62 so it needs no quoting in shells or config files. */
export const newSecretKey = (): string => randomString(40);

export const CORS_METHODS = ['GET', 'PUT', 'HEAD', 'POST', 'DELETE', 'OPTIONS'];
const MAX_LIFECYCLE_DAYS = 36500;
const MAX_LIFECYCLE_RULES = 1000;
/** S3's bound on `NewerNoncurrentVersions`. */
export const MAX_NEWER_NONCURRENT = 100;

/** Incoming CORS rule as the schema admits it (optional fields may be absent). */
export interface CorsRuleInput {
  id?: string | null;
  allowed_origins: string[];
  allowed_methods: string[];
  allowed_headers?: string[];
  expose_headers?: string[];
  max_age_seconds?: number | null;
}

/**
 * Which origins a CORS rule may name. The API takes `*` or `scheme://host[:port]`; S3's
 * PutBucketCors takes what AWS takes — any origin string with at most one `*`, matched as a
 * wildcard (`*.example.com`, `http://*.example.com`, `https://app-*.example.com`).
 */
export type CorsDialect = 'api' | 's3';

/** `maxRules` is the `storage.cors_rules` row of the limits table (null: no bound). */
export function checkCorsRules(
  rules: CorsRuleInput[],
  maxRules: number | null,
  dialect: CorsDialect = 'api',
): CorsRule[] {
  const problems: FieldProblem[] = [];
  if (rules.length === 0 || (maxRules !== null && rules.length > maxRules)) {
    problems.push({
      path: '/body/rules',
      message: maxRules === null ? 'at least 1 rule' : `1-${maxRules} rules`,
    });
  }
  const ids = new Set<string>();
  const out = rules.map((rule, i) => {
    const at = `/body/rules/${i}`;
    rule.allowed_origins.forEach((origin, j) => {
      const why = dialect === 's3' ? s3OriginProblem(origin) : originProblem(origin);
      if (why) problems.push({ path: `${at}/allowed_origins/${j}`, message: why });
    });
    rule.allowed_methods.forEach((method, j) => {
      if (!CORS_METHODS.includes(method)) {
        problems.push({
          path: `${at}/allowed_methods/${j}`,
          message: `must be one of ${CORS_METHODS.join(', ')}`,
        });
      }
    });
    const age = rule.max_age_seconds;
    if (age !== undefined && age !== null && (!Number.isInteger(age) || age < 0 || age > 86400)) {
      problems.push({ path: `${at}/max_age_seconds`, message: 'must be an integer 0-86400' });
    }
    const id = rule.id ?? `rule-${randomString(10).toLowerCase()}`;
    if (ids.has(id)) problems.push({ path: `${at}/id`, message: `duplicate rule id ${JSON.stringify(id)}` });
    ids.add(id);
    return {
      id,
      allowed_origins: dedupe(rule.allowed_origins),
      allowed_methods: dedupe(rule.allowed_methods),
      allowed_headers: dedupe(rule.allowed_headers ?? []),
      expose_headers: dedupe(rule.expose_headers ?? []),
      max_age_seconds: rule.max_age_seconds ?? null,
    };
  });
  if (problems.length > 0) throw storageErrors.invalid('The CORS document is invalid.', problems);
  return out;
}

/** AWS's rule for `AllowedOrigin`: not empty, at most one `*`. */
export function s3OriginProblem(origin: string): string | null {
  if (origin.length === 0) return 'must not be empty';
  if (origin.split('*').length > 2) return `AllowedOrigin "${origin}" can not have more than one wildcard.`;
  return null;
}

/** `*`, or `scheme://host[:port]` with no path, query, fragment or credentials. */
export function originProblem(origin: string): string | null {
  if (origin === '*') return null;
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^/?#@\s]+)$/i.exec(origin);
  if (!m) return 'must be "*" or scheme://host[:port] without a path';
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return 'not a valid origin';
  }
  if (!url.hostname) return 'the origin has no host';
  const port = /:(\d+)$/.exec(m[2]!)?.[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return 'port must be 1-65535';
  if (/:[^\]]*:/.test(m[2]!) && !m[2]!.startsWith('[')) return 'not a valid host[:port]';
  return null;
}

/** The forms only S3's PutBucketLifecycleConfiguration writes, kept as given (the S3 handler checked them). */
const S3_ONLY_RULE_FIELDS = [
  'expiration_date',
  'expired_object_delete_marker',
  'tags',
  'object_size_greater_than',
  'object_size_less_than',
  'rule_prefix',
] as const;

/** The API's fields, and the forms only S3's PutBucketLifecycleConfiguration writes. */
export interface LifecycleRuleInput
  extends Partial<Pick<LifecycleRule, (typeof S3_ONLY_RULE_FIELDS)[number]>> {
  id?: string | null;
  enabled?: boolean;
  prefix?: string | null;
  expiration_days?: number | null;
  noncurrent_version_expiration_days?: number | null;
  newer_noncurrent_versions?: number | null;
  abort_incomplete_multipart_upload_days?: number | null;
  transitions?: LifecycleTransition[] | null;
  noncurrent_version_transitions?: NoncurrentVersionTransition[] | null;
}

export function checkLifecycleRules(rules: LifecycleRuleInput[]): LifecycleRule[] {
  const problems: FieldProblem[] = [];
  if (rules.length === 0 || rules.length > MAX_LIFECYCLE_RULES) {
    problems.push({ path: '/body/rules', message: `1-${MAX_LIFECYCLE_RULES} rules` });
  }
  const ids = new Set<string>();
  const out = rules.map((rule, i) => {
    const id = rule.id ?? `rule-${randomString(10).toLowerCase()}`;
    if (ids.has(id))
      problems.push({ path: `/body/rules/${i}/id`, message: `duplicate rule id ${JSON.stringify(id)}` });
    ids.add(id);
    const r: LifecycleRule = {
      // The forms only S3's documents carry (dates, tags, sizes, delete markers) are kept as given.
      ...(rule as Partial<LifecycleRule>),
      id,
      enabled: rule.enabled ?? true,
      prefix: rule.prefix ?? '',
      expiration_days: rule.expiration_days ?? null,
      noncurrent_version_expiration_days: rule.noncurrent_version_expiration_days ?? null,
      newer_noncurrent_versions: rule.newer_noncurrent_versions ?? null,
      abort_incomplete_multipart_upload_days: rule.abort_incomplete_multipart_upload_days ?? null,
      transitions: rule.transitions ?? null,
      noncurrent_version_transitions: rule.noncurrent_version_transitions ?? null,
    };
    for (const field of [
      'expiration_days',
      'noncurrent_version_expiration_days',
      'abort_incomplete_multipart_upload_days',
    ] as const) {
      const v = r[field];
      if (v !== null && (!Number.isInteger(v) || v < 1 || v > MAX_LIFECYCLE_DAYS)) {
        problems.push({
          path: `/body/rules/${i}/${field}`,
          message: `must be an integer 1-${MAX_LIFECYCLE_DAYS}`,
        });
      }
    }
    const newer = r.newer_noncurrent_versions ?? null;
    if (newer !== null && (!Number.isInteger(newer) || newer < 1 || newer > MAX_NEWER_NONCURRENT)) {
      problems.push({
        path: `/body/rules/${i}/newer_noncurrent_versions`,
        message: `must be an integer 1-${MAX_NEWER_NONCURRENT}`,
      });
    }
    if (newer !== null && r.noncurrent_version_expiration_days === null) {
      problems.push({
        path: `/body/rules/${i}/newer_noncurrent_versions`,
        message: 'needs noncurrent_version_expiration_days',
      });
    }
    const moves = transitionProblem(r);
    if (moves) problems.push({ path: `/body/rules/${i}/${moves.field}`, message: moves.message });
    if (
      r.expiration_days === null &&
      r.noncurrent_version_expiration_days === null &&
      r.abort_incomplete_multipart_upload_days === null &&
      r.expiration_date == null &&
      !r.expired_object_delete_marker &&
      !hasTransitions(r)
    ) {
      problems.push({
        path: `/body/rules/${i}`,
        message:
          'a rule needs at least one of expiration_days, noncurrent_version_expiration_days, abort_incomplete_multipart_upload_days, transitions, noncurrent_version_transitions',
      });
    }
    return r;
  });
  if (problems.length > 0) throw storageErrors.invalid('The lifecycle configuration is invalid.', problems);
  return out;
}

/** Known bucket-level action names, deduplicated, in catalogue order. */
export function checkBucketActions(actions: string[], path: string): string[] {
  return checkActions(actions, BUCKET_ACTIONS, path, 'a bucket');
}

export function checkAccountActions(actions: string[], path: string): string[] {
  return checkActions(actions, ACCOUNT_ACTIONS, path, 'the account');
}

function checkActions(actions: string[], known: readonly string[], path: string, what: string): string[] {
  const problems: FieldProblem[] = [];
  actions.forEach((a, i) => {
    if (!known.includes(a)) {
      problems.push({
        path: `${path}/${i}`,
        message: `unknown action ${JSON.stringify(a)} for ${what}; see GET /v1/storage/actions`,
      });
    }
  });
  if (problems.length > 0) throw storageErrors.invalid('Unknown S3 action.', problems);
  return known.filter((a) => actions.includes(a));
}

const dedupe = (xs: string[]) => [...new Set(xs)];
