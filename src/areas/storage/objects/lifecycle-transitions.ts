import type { LifecycleRule } from '../data-plane-contract.js';
import type { ObjectRepo } from './repo.js';
import { ARCHIVE_CLASSES, THIRTY_DAY_CLASSES, TRANSITION_CLASSES, transitionMoves } from './storage-class.js';
import type { ObjectRow } from './tables.js';

/**
 * Lifecycle transitions (S3's `Transition` and `NoncurrentVersionTransition`): the rules S3 puts
 * on them, shared by the S3 document and the control API, and their application by the
 * lifecycle job. Every class is on the same disk, so a transition changes a version's label
 * and never its bytes, its ETag or its dates.
 */

const DAY_MS = 86_400_000;
/** S3 does not transition objects smaller than 128 KiB unless the rule filters by size. */
export const TRANSITION_MIN_BYTES = 128 * 1024;

/** Why a rule's transitions are refused: `archive` classes are not done, `unknown` ones do not exist. */
export interface TransitionProblem {
  kind: 'archive' | 'unknown' | 'invalid';
  field: string;
  message: string;
}

/** The first thing wrong with a rule's transitions as S3 checks them, or null. */
export function transitionProblem(rule: LifecycleRule): TransitionProblem | null {
  const current = rule.transitions ?? [];
  const noncurrent = rule.noncurrent_version_transitions ?? [];
  const all = [
    ...current.map((t, i) => ({
      t,
      days: t.days,
      field: `transitions/${i}`,
      action: 'Transition',
      d: 'Days',
    })),
    ...noncurrent.map((t, i) => ({
      t,
      days: t.noncurrent_days,
      field: `noncurrent_version_transitions/${i}`,
      action: 'NoncurrentVersionTransition',
      d: 'NoncurrentDays',
    })),
  ];
  for (const { t, days, field, action, d } of all) {
    const cls = t.storage_class;
    if ((ARCHIVE_CLASSES as readonly string[]).includes(cls))
      return {
        kind: 'archive',
        field,
        message: `Fjord does not transition objects to ${cls}: archived objects must be restored before a read, and Fjord has no RestoreObject.`,
      };
    if (!(TRANSITION_CLASSES as readonly string[]).includes(cls))
      return {
        kind: 'unknown',
        field,
        message: `'StorageClass' ${cls} is not a class a lifecycle rule moves objects to`,
      };
    if (days !== null && THIRTY_DAY_CLASSES.includes(cls) && days < 30)
      return {
        kind: 'invalid',
        field,
        message: `'${d}' in ${action} action must be greater than or equal to 30 for storageClass '${cls}'`,
      };
  }
  const distinct = (list: { storage_class: string }[]) =>
    new Set(list.map((t) => t.storage_class)).size === list.length;
  if (!distinct(current))
    return {
      kind: 'invalid',
      field: 'transitions',
      message: "'StorageClass' must be different for 'Transition' actions in same 'Rule'",
    };
  if (!distinct(noncurrent))
    return {
      kind: 'invalid',
      field: 'noncurrent_version_transitions',
      message: "'StorageClass' must be different for 'NoncurrentVersionTransition' actions in same 'Rule'",
    };
  const byDays = current.filter((t) => t.days !== null);
  if (byDays.length > 0 && byDays.length < current.length)
    return {
      kind: 'invalid',
      field: 'transitions',
      message: "Found mixed 'Date' and 'Days' based Transition actions in lifecycle rule",
    };
  const exp = rule.expiration_days;
  if (exp !== null && byDays.some((t) => t.days! >= exp))
    return {
      kind: 'invalid',
      field: 'expiration_days',
      message: "'Days' in the Expiration action must be greater than 'Days' in the Transition action",
    };
  const ncExp = rule.noncurrent_version_expiration_days;
  if (ncExp !== null && noncurrent.some((t) => t.noncurrent_days >= ncExp))
    return {
      kind: 'invalid',
      field: 'noncurrent_version_expiration_days',
      message:
        "'NoncurrentDays' in the NoncurrentVersionExpiration action must be greater than 'NoncurrentDays' in the NoncurrentVersionTransition action",
    };
  return null;
}

export const hasTransitions = (rule: LifecycleRule) =>
  (rule.transitions?.length ?? 0) > 0 || (rule.noncurrent_version_transitions?.length ?? 0) > 0;

type Candidate = Pick<
  ObjectRow,
  | 'id'
  | 'key'
  | 'size'
  | 'tags'
  | 'is_latest'
  | 'is_delete_marker'
  | 'last_modified'
  | 'noncurrent_since'
  | 'storage_class'
>;

/**
 * One pass of a rule's transitions as of `now`: each version the rule's filter matches takes the
 * furthest class (down S3's waterfall) among the transitions that are due for it, if that is
 * further than where it is. A noncurrent transition with `newer_noncurrent_versions` leaves the
 * newest that many noncurrent versions of each key where they are (`newerCount` ranks them).
 */
export async function applyTransitions(
  repo: ObjectRepo,
  bucketId: string,
  rule: LifecycleRule,
  now: number,
  matches: (row: Candidate) => boolean,
  newerCount: (key: string, rowId: string) => Promise<number>,
): Promise<number> {
  const sized = rule.object_size_greater_than != null || rule.object_size_less_than != null;
  let moved = 0;
  let after: { key: string; id: string } | null = null;
  for (;;) {
    const rows = await repo.lifecycleCandidates(bucketId, rule.prefix, after, 500);
    if (rows.length === 0) break;
    after = rows[rows.length - 1]!;
    for (const row of rows) {
      if (row.is_delete_marker || !matches(row)) continue;
      if (!sized && Number(row.size) < TRANSITION_MIN_BYTES) continue;
      const due: string[] = [];
      if (row.is_latest) {
        const age = now - Number(row.last_modified);
        for (const t of rule.transitions ?? [])
          if (t.days !== null ? age >= t.days * DAY_MS : t.date != null && now >= t.date)
            due.push(t.storage_class);
      } else {
        const age = now - Number(row.noncurrent_since ?? now);
        for (const t of rule.noncurrent_version_transitions ?? []) {
          if (age < t.noncurrent_days * DAY_MS) continue;
          const keep = t.newer_noncurrent_versions ?? 0;
          if (keep > 0 && (await newerCount(row.key, row.id)) < keep) continue;
          due.push(t.storage_class);
        }
      }
      let target: string | null = null;
      for (const cls of due) if (transitionMoves(target ?? row.storage_class, cls)) target = cls;
      if (target !== null && transitionMoves(row.storage_class, target)) {
        if (await repo.updateStorageClass(row, target)) moved++;
      }
    }
    if (rows.length < 500) break;
  }
  return moved;
}
