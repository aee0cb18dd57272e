import type {
  LifecycleRule,
  LifecycleTransition,
  NoncurrentVersionTransition,
} from '../../data-plane-contract.js';
import { transitionProblem } from '../../objects/lifecycle-transitions.js';
import { MAX_NEWER_NONCURRENT } from '../../validation.js';
import { s3Errors } from '../errors.js';
import { asText, el } from '../xml.js';

/**
 * S3's `Transition` and `NoncurrentVersionTransition` in a lifecycle document: read, checked as
 * S3 checks them (the rules live in objects/lifecycle-transitions.ts) and written back.
 */

type Xml = Record<string, unknown>;
const list = (v: unknown): Xml[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]) as Xml[];

/** Days of a transition: 0 or more (an expiration's must be at least 1). */
function days(v: unknown): number | null {
  if (v === undefined) return null;
  const t = asText(v);
  if (!t || !/^\d{1,6}$/.test(t)) throw s3Errors.malformedXml();
  return Number(t);
}

function storageClass(v: unknown): string {
  const t = asText(v);
  if (!t) throw s3Errors.malformedXml();
  return t;
}

/** Reads a rule's transitions into `rule`; `midnight` reads S3's `Date`. */
export function parseTransitions(r: Xml, rule: LifecycleRule, midnight: (v: unknown) => number | null): void {
  const current: LifecycleTransition[] = list(r['Transition']).map((t) => {
    const d = days(t['Days']);
    const date = midnight(t['Date']);
    if ((d === null) === (date === null))
      throw s3Errors.invalidArgument('Exactly one of Days or Date must be given in a Transition action');
    return { days: d, date, storage_class: storageClass(t['StorageClass']) };
  });
  const noncurrent: NoncurrentVersionTransition[] = list(r['NoncurrentVersionTransition']).map((t) => {
    const d = days(t['NoncurrentDays']);
    if (d === null) throw s3Errors.malformedXml();
    const out: NoncurrentVersionTransition = {
      noncurrent_days: d,
      storage_class: storageClass(t['StorageClass']),
    };
    const newer = asText(t['NewerNoncurrentVersions']);
    if (newer !== undefined) {
      const n = Number(newer);
      if (!/^-?\d+$/.test(newer)) throw s3Errors.malformedXml();
      if (n < 1 || n > MAX_NEWER_NONCURRENT)
        throw s3Errors.invalidArgument(
          `NewerNoncurrentVersions must be between 1 and ${MAX_NEWER_NONCURRENT}`,
          'NewerNoncurrentVersions',
          newer,
        );
      out.newer_noncurrent_versions = n;
    }
    return out;
  });
  if (current.length > 0) rule.transitions = current;
  if (noncurrent.length > 0) rule.noncurrent_version_transitions = noncurrent;
  const problem = transitionProblem(rule);
  if (!problem) return;
  if (problem.kind === 'archive') throw s3Errors.notImplemented(problem.message);
  if (problem.kind === 'unknown') throw s3Errors.malformedXml();
  throw s3Errors.invalidArgument(problem.message);
}

/** A rule's transitions as S3's XML. */
export function transitionsXml(r: LifecycleRule): string {
  let x = '';
  for (const t of r.transitions ?? []) {
    const when = t.days !== null ? el('Days', t.days) : el('Date', new Date(t.date ?? 0).toISOString());
    x += `<Transition>${when}${el('StorageClass', t.storage_class)}</Transition>`;
  }
  for (const t of r.noncurrent_version_transitions ?? []) {
    const newer =
      t.newer_noncurrent_versions != null ? el('NewerNoncurrentVersions', t.newer_noncurrent_versions) : '';
    x += `<NoncurrentVersionTransition>${el('NoncurrentDays', t.noncurrent_days)}${el('StorageClass', t.storage_class)}${newer}</NoncurrentVersionTransition>`;
  }
  return x;
}

/**
 * `x-amz-transition-default-minimum-object-size`: both of S3's settings keep objects under
 * 128 KiB where they are for every class Fjord transitions to (they differ only for GLACIER and
 * DEEP_ARCHIVE), so both are taken and Fjord reports the default.
 */
export const TRANSITION_MINIMUM_HEADER = 'x-amz-transition-default-minimum-object-size';
export function checkTransitionMinimum(value: string | undefined): void {
  if (value !== undefined && value !== 'all_storage_classes_128K' && value !== 'varies_by_storage_class')
    throw s3Errors.invalidArgument(
      'Invalid transition default minimum object size',
      TRANSITION_MINIMUM_HEADER,
      value,
    );
}
