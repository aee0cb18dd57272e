import type { LifecycleRule } from '../data-plane-contract.js';

const DAY_MS = 86_400_000;

/** What a lifecycle filter looks at on one object version. */
export interface ExpiringObject {
  key: string;
  size: number;
  /** The version's tags as stored (a JSON object). */
  tags: string;
  lastModified: number;
  is_delete_marker?: unknown;
}

/** A rule's filter beyond its prefix (S3's tag and object-size conditions); markers have neither. */
export function matchesFilter(
  rule: LifecycleRule,
  row: { size: number; tags: string; is_delete_marker?: unknown },
): boolean {
  const gt = rule.object_size_greater_than;
  const lt = rule.object_size_less_than;
  if (!rule.tags && gt == null && lt == null) return true;
  if (row.is_delete_marker) return !rule.tags && gt == null && lt == null;
  if (gt != null && !(Number(row.size) > gt)) return false;
  if (lt != null && !(Number(row.size) < lt)) return false;
  if (rule.tags) {
    const tags = JSON.parse(row.tags || '{}') as Record<string, string>;
    for (const [k, v] of Object.entries(rule.tags)) if (tags[k] !== v) return false;
  }
  return true;
}

/**
 * When the current version `object` expires under the bucket's rules, and which rule expires it
 * first — what S3's `x-amz-expiration` header tells a client on PUT, GET and HEAD. The time is
 * the one Fjord's lifecycle pass acts on: `Days` after the version was written, or the rule's
 * `Date` (AWS rounds a `Days` expiry up to the next midnight UTC; Fjord does not wait for it).
 */
export function expirationOf(
  rules: LifecycleRule[] | null,
  object: ExpiringObject,
): { at: number; ruleId: string } | null {
  let first: { at: number; ruleId: string } | null = null;
  for (const rule of rules ?? []) {
    if (!rule.enabled || !object.key.startsWith(rule.prefix ?? '')) continue;
    const at =
      rule.expiration_days !== null
        ? object.lastModified + rule.expiration_days * DAY_MS
        : (rule.expiration_date ?? null);
    if (at === null || !matchesFilter(rule, object)) continue;
    if (first === null || at < first.at) first = { at, ruleId: rule.id };
  }
  return first;
}

/** `x-amz-expiration`'s value: `expiry-date="<HTTP date>", rule-id="<id>"`. */
export function expirationHeader(rules: LifecycleRule[] | null, object: ExpiringObject): string | null {
  const e = expirationOf(rules, object);
  return e && `expiry-date="${new Date(e.at).toUTCString()}", rule-id="${e.ruleId.replace(/"/g, '\\"')}"`;
}
