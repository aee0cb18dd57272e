import { BlockList, isIP } from 'node:net';
import {
  type BucketPolicy,
  globToRegExp,
  isDateOperator,
  isNumericOperator,
  type PolicyCondition,
  type PolicyStatement,
} from './policy.js';

/**
 * A bucket policy applied to one request, as AWS evaluates it: an explicit Deny wins; otherwise
 * a matching Allow allows; otherwise the policy says nothing (the key's grants and ACLs decide).
 */

export interface PolicyRequest {
  /** null for an anonymous request. */
  principal: { accessKeyId: string; accountId: string } | null;
  action: string;
  /** `arn:aws:s3:::bucket` or `arn:aws:s3:::bucket/key`. */
  resource: string;
  /** Condition keys, lower-cased, with the request's values; absent keys are left out. */
  context: Record<string, string[]>;
}

export type PolicyVerdict = 'allow' | 'deny' | 'none';

export function evaluatePolicy(policy: BucketPolicy, req: PolicyRequest): PolicyVerdict {
  let allowed = false;
  for (const s of policy.statements) {
    if (!statementApplies(s, req)) continue;
    if (s.effect === 'Deny') return 'deny';
    allowed = true;
  }
  return allowed ? 'allow' : 'none';
}

function statementApplies(s: PolicyStatement, req: PolicyRequest): boolean {
  if (s.principals && !s.principals.some((p) => principalMatches(p, req.principal))) return false;
  if (s.notPrincipals?.some((p) => principalMatches(p, req.principal))) return false;
  const action = (a: string) => globToRegExp(a, 'i').test(req.action);
  if (s.actions && !s.actions.some(action)) return false;
  if (s.notActions?.some(action)) return false;
  const resource = (r: string) => globToRegExp(r).test(req.resource);
  if (s.resources && !s.resources.some(resource)) return false;
  if (s.notResources?.some(resource)) return false;
  return s.conditions.every((c) => conditionHolds(c, req.context));
}

function principalMatches(p: string, who: PolicyRequest['principal']): boolean {
  if (p === '*') return true;
  if (!who) return false;
  return p === who.accessKeyId || p === who.accountId || p === `arn:aws:iam::${who.accountId}:root`;
}

const NEGATED = new Set([
  'StringNotEquals',
  'StringNotEqualsIgnoreCase',
  'StringNotLike',
  'NumericNotEquals',
  'DateNotEquals',
  'ArnNotEquals',
  'ArnNotLike',
  'NotIpAddress',
]);

export function conditionHolds(c: PolicyCondition, context: Record<string, string[]>): boolean {
  const present = context[c.key];
  if (c.operator === 'Null') {
    const wantAbsent = c.values.some((v) => v.toLowerCase() === 'true');
    return wantAbsent ? present === undefined : present !== undefined;
  }
  if (present === undefined || present.length === 0) {
    if (c.ifExists) return true;
    // A negated operator holds when the key is missing (AWS), as does ForAllValues over nothing.
    return NEGATED.has(c.operator) || c.set === 'all';
  }
  const negated = NEGATED.has(c.operator);
  const positive = positiveOf(c.operator);
  const matchesOne = (value: string) => c.values.some((want) => compare(positive, value, want));
  if (c.set === 'all') return present.every((v) => (negated ? !matchesOne(v) : matchesOne(v)));
  // Single-valued keys and ForAnyValue: any value of the request that matches.
  const any = present.some(matchesOne);
  return negated ? !any : any;
}

function positiveOf(op: string): string {
  switch (op) {
    case 'StringNotEquals':
      return 'StringEquals';
    case 'StringNotEqualsIgnoreCase':
      return 'StringEqualsIgnoreCase';
    case 'StringNotLike':
      return 'StringLike';
    case 'NumericNotEquals':
      return 'NumericEquals';
    case 'DateNotEquals':
      return 'DateEquals';
    case 'ArnNotEquals':
      return 'ArnEquals';
    case 'ArnNotLike':
      return 'ArnLike';
    case 'NotIpAddress':
      return 'IpAddress';
    default:
      return op;
  }
}

function compare(op: string, actual: string, want: string): boolean {
  switch (op) {
    case 'StringEquals':
    case 'ArnEquals':
      return actual === want;
    case 'StringEqualsIgnoreCase':
      return actual.toLowerCase() === want.toLowerCase();
    case 'StringLike':
    case 'ArnLike':
      return globToRegExp(want).test(actual);
    case 'Bool':
      return actual.toLowerCase() === want.toLowerCase();
    case 'IpAddress':
      return ipInRange(actual, want);
  }
  if (isNumericOperator(op)) return ordered(op.slice('Numeric'.length), Number(actual), Number(want));
  if (isDateOperator(op)) return ordered(op.slice('Date'.length), toMs(actual), toMs(want));
  return false;
}

function ordered(rel: string, a: number, b: number): boolean {
  if (Number.isNaN(a) || Number.isNaN(b)) return false;
  switch (rel) {
    case 'Equals':
      return a === b;
    case 'LessThan':
      return a < b;
    case 'LessThanEquals':
      return a <= b;
    case 'GreaterThan':
      return a > b;
    case 'GreaterThanEquals':
      return a >= b;
    default:
      return false;
  }
}

/** ISO 8601 or epoch seconds (aws:EpochTime), in ms. */
const toMs = (v: string) => (/^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v));

function ipInRange(ip: string, cidr: string): boolean {
  const addr = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  const family = isIP(addr);
  const [net, bits] = cidr.split('/');
  const netFamily = isIP(net ?? '');
  if (!family || !netFamily || family !== netFamily) return false;
  const list = new BlockList();
  const type = family === 4 ? 'ipv4' : 'ipv6';
  list.addSubnet(net!, bits === undefined ? (family === 4 ? 32 : 128) : Number(bits), type);
  return list.check(addr, type);
}

/**
 * Whether the policy opens the bucket to anyone: an Allow to every principal that no condition
 * narrows to known callers (a source IP range, an account). As AWS judges it for
 * GetBucketPolicyStatus, BlockPublicPolicy and RestrictPublicBuckets.
 */
export function isPublicPolicy(policy: BucketPolicy): boolean {
  return policy.statements.some(
    (s) =>
      s.effect === 'Allow' &&
      (s.notPrincipals !== null || (s.principals?.includes('*') ?? false)) &&
      !s.conditions.some(narrows),
  );
}

function narrows(c: PolicyCondition): boolean {
  if (c.ifExists) return false;
  if (c.key === 'aws:sourceip' && c.operator === 'IpAddress') return !c.values.some((v) => /\/0$/.test(v));
  if ((c.key === 'aws:principalaccount' || c.key === 'aws:userid') && c.operator === 'StringEquals')
    return !c.values.some((v) => v.includes('*'));
  return false;
}
