import { isIP } from 'node:net';

/**
 * Bucket policies in AWS's policy language, parsed and checked once (PutBucketPolicy refuses a
 * document that does not pass, with the reason in MalformedPolicy's message). Evaluation is in
 * policy-eval.ts.
 */

export interface PolicyCondition {
  /** The operator without its modifiers: `StringLike`, `IpAddress` … */
  operator: string;
  ifExists: boolean;
  /** `ForAnyValue:` / `ForAllValues:` set operators; null for single-valued keys. */
  set: 'any' | 'all' | null;
  /** Condition keys are case-insensitive: kept lower-cased. */
  key: string;
  values: string[];
}

export interface PolicyStatement {
  sid: string | null;
  effect: 'Allow' | 'Deny';
  /** `*` for everyone; else access key ids, account (customer) ids and `arn:aws:iam::<account>:root`. */
  principals: string[] | null;
  notPrincipals: string[] | null;
  actions: string[] | null;
  notActions: string[] | null;
  resources: string[] | null;
  notResources: string[] | null;
  conditions: PolicyCondition[];
}

export interface BucketPolicy {
  version: string;
  statements: PolicyStatement[];
}

export const MAX_POLICY_BYTES = 20 * 1024;

const STRING_OPS = [
  'StringEquals',
  'StringNotEquals',
  'StringEqualsIgnoreCase',
  'StringNotEqualsIgnoreCase',
  'StringLike',
  'StringNotLike',
];
const NUMERIC_OPS = [
  'NumericEquals',
  'NumericNotEquals',
  'NumericLessThan',
  'NumericLessThanEquals',
  'NumericGreaterThan',
  'NumericGreaterThanEquals',
];
const DATE_OPS = [
  'DateEquals',
  'DateNotEquals',
  'DateLessThan',
  'DateLessThanEquals',
  'DateGreaterThan',
  'DateGreaterThanEquals',
];
const ARN_OPS = ['ArnEquals', 'ArnLike', 'ArnNotEquals', 'ArnNotLike'];
export const OPERATORS = new Set([
  ...STRING_OPS,
  ...NUMERIC_OPS,
  ...DATE_OPS,
  ...ARN_OPS,
  'Bool',
  'IpAddress',
  'NotIpAddress',
  'Null',
]);
export const isDateOperator = (op: string) => DATE_OPS.includes(op);
export const isNumericOperator = (op: string) => NUMERIC_OPS.includes(op);

/** Condition keys Fjord fills in from the request (lower-cased). */
export const CONDITION_KEYS = new Set([
  'aws:sourceip',
  'aws:securetransport',
  'aws:currenttime',
  'aws:epochtime',
  'aws:useragent',
  'aws:referer',
  'aws:principaltype',
  'aws:principalaccount',
  'aws:userid',
  's3:prefix',
  's3:delimiter',
  's3:max-keys',
  's3:x-amz-acl',
  's3:x-amz-server-side-encryption',
  's3:x-amz-content-sha256',
  's3:versionid',
  's3:signatureversion',
  's3:authtype',
  's3:object-lock-mode',
  's3:object-lock-legal-hold',
  's3:x-amz-copy-source',
  's3:x-amz-metadata-directive',
  's3:x-amz-server-side-encryption-aws-kms-key-id',
  's3:x-amz-server-side-encryption-customer-algorithm',
  's3:x-amz-grant-read',
  's3:x-amz-grant-write',
  's3:x-amz-grant-read-acp',
  's3:x-amz-grant-write-acp',
  's3:x-amz-grant-full-control',
  's3:requestobjecttagkeys',
]);
/** `s3:RequestObjectTag/<tag key>`: the tags a request sets in `x-amz-tagging`. */
export const REQUEST_TAG_KEY = 's3:requestobjecttag/';
/** `s3:ExistingObjectTag/<tag key>`: the tags of the object a request acts on, as stored. */
export const EXISTING_TAG_KEY = 's3:existingobjecttag/';
const isTagKey = (key: string, prefix: string) => key.startsWith(prefix) && key.length > prefix.length;
export const isConditionKey = (key: string) =>
  CONDITION_KEYS.has(key) || isTagKey(key, REQUEST_TAG_KEY) || isTagKey(key, EXISTING_TAG_KEY);

/** Whether a policy's conditions read the tags of the object a request acts on (one more read). */
export const readsExistingTags = (policy: BucketPolicy): boolean =>
  policy.statements.some((s) => s.conditions.some((c) => c.key.startsWith(EXISTING_TAG_KEY)));

class Malformed extends Error {}
const fail = (reason: string): never => {
  throw new Malformed(reason);
};

const list = (v: unknown, what: string): string[] => {
  const items = Array.isArray(v) ? v : [v];
  if (items.length === 0) fail(`${what} must not be empty`);
  return items.map((x) =>
    typeof x === 'string'
      ? x
      : typeof x === 'number' || typeof x === 'boolean'
        ? String(x)
        : fail(`Invalid ${what}`),
  );
};

function principals(v: unknown): string[] {
  if (v === '*') return ['*'];
  if (!v || typeof v !== 'object' || Array.isArray(v)) return fail('Invalid principal in policy');
  const out: string[] = [];
  for (const [type, ids] of Object.entries(v as Record<string, unknown>)) {
    if (type !== 'AWS' && type !== 'CanonicalUser') return fail('Invalid principal in policy');
    for (const id of list(ids, 'principal')) {
      if (id === '*' || /^arn:aws:iam::[A-Za-z0-9_-]+:root$/.test(id) || /^[A-Za-z0-9_-]+$/.test(id))
        out.push(id);
      else fail('Invalid principal in policy');
    }
  }
  if (out.length === 0) fail('Invalid principal in policy');
  return out;
}

function actions(v: unknown): string[] {
  return list(v, 'action').map((a) =>
    a === '*' || /^s3:[A-Za-z*?]+$/i.test(a) ? a : fail('Policy has invalid action'),
  );
}

function resources(v: unknown, bucket: string): string[] {
  return list(v, 'resource').map((r) => {
    if (r === '*') return r;
    const m = /^arn:aws:s3:::([^/]+)(\/.*)?$/.exec(r);
    if (!m) return fail('Policy has invalid resource');
    const named = m[1]!;
    // A resource of another bucket is an error, as on AWS; wildcards may still cover this one.
    if (!globToRegExp(named).test(bucket)) return fail('Policy has invalid resource');
    return r;
  });
}

function checkValue(operator: string, key: string, value: string): void {
  if (operator === 'IpAddress' || operator === 'NotIpAddress') {
    const [addr, bits, extra] = value.split('/');
    const family = isIP(addr ?? '');
    const max = family === 4 ? 32 : 128;
    if (
      !family ||
      extra !== undefined ||
      (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= max))
    )
      fail(`Invalid IP address: ${value}`);
  } else if (isDateOperator(operator)) {
    if (!/^\d+$/.test(value) && Number.isNaN(Date.parse(value))) fail(`Invalid date: ${value}`);
  } else if (isNumericOperator(operator)) {
    if (!/^-?\d+(\.\d+)?$/.test(value)) fail(`Invalid number: ${value}`);
  } else if (operator === 'Bool' || operator === 'Null') {
    if (!/^(true|false)$/i.test(value)) fail(`Invalid boolean value for ${key}: ${value}`);
  }
}

function conditions(v: unknown): PolicyCondition[] {
  if (v === undefined) return [];
  if (!v || typeof v !== 'object' || Array.isArray(v)) return fail('Invalid Condition block');
  const out: PolicyCondition[] = [];
  for (const [rawOp, block] of Object.entries(v as Record<string, unknown>)) {
    const m = /^(?:(ForAnyValue|ForAllValues):)?(.+?)(IfExists)?$/.exec(rawOp)!;
    const operator = m[2]!;
    if (!OPERATORS.has(operator) || (m[3] && operator === 'Null')) fail(`Invalid Condition type : ${rawOp}`);
    if (!block || typeof block !== 'object' || Array.isArray(block))
      fail(`Invalid Condition block for ${rawOp}`);
    for (const [rawKey, values] of Object.entries(block as Record<string, unknown>)) {
      const key = rawKey.toLowerCase();
      // Keys Fjord does not fill in (aws:SourceVpc …) are refused: a
      // condition on a key that is never there would silently never (or always) hold.
      if (!isConditionKey(key)) fail(`Policy has an invalid condition key: ${rawKey}`);
      const vals = list(values, 'condition value');
      for (const val of vals) checkValue(operator, rawKey, val);
      out.push({
        operator,
        ifExists: Boolean(m[3]),
        set: m[1] === 'ForAnyValue' ? 'any' : m[1] === 'ForAllValues' ? 'all' : null,
        key,
        values: vals,
      });
    }
  }
  return out;
}

const STATEMENT_FIELDS = new Set([
  'Sid',
  'Effect',
  'Principal',
  'NotPrincipal',
  'Action',
  'NotAction',
  'Resource',
  'NotResource',
  'Condition',
]);

function statement(v: unknown): PolicyStatement {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return fail('Statement must be an object');
  const s = v as Record<string, unknown>;
  for (const k of Object.keys(s)) if (!STATEMENT_FIELDS.has(k)) fail(`Unknown field ${k}`);
  if (s['Effect'] !== 'Allow' && s['Effect'] !== 'Deny')
    fail(
      s['Effect'] === undefined ? 'Missing required field Effect' : `Invalid effect: ${String(s['Effect'])}`,
    );
  if ((s['Principal'] === undefined) === (s['NotPrincipal'] === undefined))
    fail(
      s['Principal'] === undefined
        ? 'Missing required field Principal'
        : 'Principal and NotPrincipal together',
    );
  // AWS refuses NotPrincipal with Allow: "everyone but" would grant the whole world.
  if (s['NotPrincipal'] !== undefined && s['Effect'] === 'Allow')
    fail('Invalid policy: NotPrincipal is supported only with Effect Deny');
  if ((s['Action'] === undefined) === (s['NotAction'] === undefined))
    fail(s['Action'] === undefined ? 'Missing required field Action' : 'Action and NotAction together');
  if ((s['Resource'] === undefined) === (s['NotResource'] === undefined))
    fail(
      s['Resource'] === undefined ? 'Missing required field Resource' : 'Resource and NotResource together',
    );
  if (s['Sid'] !== undefined && typeof s['Sid'] !== 'string') fail('Statement IDs (SID) must be strings');
  return {
    sid: (s['Sid'] as string | undefined) ?? null,
    effect: s['Effect'] as 'Allow' | 'Deny',
    principals: s['Principal'] === undefined ? null : principals(s['Principal']),
    notPrincipals: s['NotPrincipal'] === undefined ? null : principals(s['NotPrincipal']),
    actions: s['Action'] === undefined ? null : actions(s['Action']),
    notActions: s['NotAction'] === undefined ? null : actions(s['NotAction']),
    resources: null,
    notResources: null,
    conditions: conditions(s['Condition']),
  };
}

/** The policy document, checked; throws `MalformedPolicyError` with AWS's kind of reason. */
export function parsePolicy(text: string, bucket: string): BucketPolicy {
  try {
    if (Buffer.byteLength(text) > MAX_POLICY_BYTES) fail('Policies must be 20 KB or smaller');
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      fail("Policies must be valid JSON and the first byte must be '{'");
    }
    if (!doc || typeof doc !== 'object' || Array.isArray(doc))
      fail("Policies must be valid JSON and the first byte must be '{'");
    const d = doc as Record<string, unknown>;
    for (const k of Object.keys(d))
      if (k !== 'Version' && k !== 'Id' && k !== 'Statement') fail(`Unknown field ${k}`);
    const version = d['Version'] ?? '2008-10-17';
    if (version !== '2012-10-17' && version !== '2008-10-17')
      fail(`The policy must contain a valid version string`);
    if (d['Statement'] === undefined) fail('Missing required field Statement');
    const raw = Array.isArray(d['Statement']) ? d['Statement'] : [d['Statement']];
    if (raw.length === 0) fail('Missing required field Statement');
    const statements = raw.map((r) => {
      const st = statement(r);
      const s = r as Record<string, unknown>;
      st.resources = s['Resource'] === undefined ? null : resources(s['Resource'], bucket);
      st.notResources = s['NotResource'] === undefined ? null : resources(s['NotResource'], bucket);
      return st;
    });
    return { version: version as string, statements };
  } catch (err) {
    if (err instanceof Malformed) throw new MalformedPolicyError(err.message);
    throw err;
  }
}

export class MalformedPolicyError extends Error {}

/** `*` and `?` wildcards (policy actions, resources, StringLike), anchored. */
export function globToRegExp(glob: string, flags = ''): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\*?]/g, (c) => (c === '*' ? '.*' : c === '?' ? '.' : `\\${c}`));
  return new RegExp(`^${body}$`, `s${flags}`);
}
