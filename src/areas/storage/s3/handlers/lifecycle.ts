import type { LifecycleRule } from '../../data-plane-contract.js';
import { MAX_NEWER_NONCURRENT } from '../../validation.js';
import type { S3Call } from '../context.js';
import { s3Errors } from '../errors.js';
import { asText, el, parseXml } from '../xml.js';
import { viaDirectory } from './configuration.js';
import {
  checkTransitionMinimum,
  parseTransitions,
  TRANSITION_MINIMUM_HEADER,
  transitionsXml,
} from './lifecycle-transitions.js';

/**
 * S3's bucket lifecycle documents: a filter by prefix, tag, object size or several at once
 * (`And`); expiry by days or at a date, of lone delete markers, of noncurrent versions (keeping
 * the newest few with `NewerNoncurrentVersions`); aborting old uploads; transitions of current
 * and noncurrent versions between storage classes (labels: lifecycle-transitions.ts), except to
 * the archive classes, which are refused rather than ignored.
 */

type Xml = Record<string, unknown>;
const list = (v: unknown): Xml[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]) as Xml[];

/**
 * A day count: not a number is MalformedXML; 0 is InvalidArgument, with AWS's wording
 * (`'Days' for Expiration action must be a positive integer`).
 */
function days(v: unknown, field: string, action: string): number | null {
  if (v === undefined) return null;
  const t = asText(v);
  if (!t || !/^\d+$/.test(t)) throw s3Errors.malformedXml();
  if (Number(t) < 1)
    throw s3Errors.invalidArgument(`'${field}' for ${action} action must be a positive integer`, field, t);
  return Number(t);
}

/** `NewerNoncurrentVersions`: how many noncurrent versions to keep, 1-100 as on S3. */
function newerVersions(v: unknown): number | null {
  if (v === undefined) return null;
  const t = asText(v);
  if (!t || !/^-?\d+$/.test(t)) throw s3Errors.malformedXml();
  const n = Number(t);
  if (n < 1 || n > MAX_NEWER_NONCURRENT)
    throw s3Errors.invalidArgument(
      `NewerNoncurrentVersions must be between 1 and ${MAX_NEWER_NONCURRENT}`,
      'NewerNoncurrentVersions',
      t,
    );
  return n;
}

function bytes(v: unknown): number | null {
  if (v === undefined) return null;
  const t = asText(v);
  if (!t || !/^\d{1,16}$/.test(t)) throw s3Errors.malformedXml();
  return Number(t);
}

/** S3's `Date`: ISO 8601, and at midnight UTC. */
function midnight(v: unknown): number | null {
  if (v === undefined) return null;
  const t = asText(v) ?? '';
  const ms = /^\d{4}-\d\d-\d\d(T[\d:.]+(Z|[+-]00:00)?)?$/.test(t)
    ? Date.parse(t.length === 10 ? `${t}T00:00:00Z` : t)
    : NaN;
  if (Number.isNaN(ms)) throw s3Errors.invalidArgument("'Date' must be an ISO 8601 date", 'Date', t);
  if (ms % 86_400_000 !== 0) throw s3Errors.invalidArgument("'Date' must be at midnight GMT", 'Date', t);
  return ms;
}

function tagsOf(v: unknown): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const t of list(v)) {
    const key = asText(t['Key']);
    if (!key) throw s3Errors.malformedXml();
    if (key in tags) throw s3Errors.invalidRequest('Duplicate Tag Keys are not allowed.');
    tags[key] = asText(t['Value']) ?? '';
  }
  return tags;
}

function parseRule(r: Xml, i: number): LifecycleRule {
  const status = asText(r['Status']);
  if (status !== 'Enabled' && status !== 'Disabled') throw s3Errors.malformedXml();
  const id = asText(r['ID']) || `rule-${i + 1}`;
  if (id.length > 255)
    throw s3Errors.invalidArgument('ID length should not exceed allowed limit of 255', 'ID', id);
  const filter = (r['Filter'] ?? {}) as Xml;
  const and = (filter['And'] ?? {}) as Xml;
  const conditions = ['Prefix', 'Tag', 'ObjectSizeGreaterThan', 'ObjectSizeLessThan'].filter(
    (k) => filter[k] !== undefined,
  );
  // A filter names one condition, or several inside And, as S3 requires.
  if (conditions.length > 1 || (conditions.length === 1 && filter['And'] !== undefined))
    throw s3Errors.malformedXml();
  const tags = { ...tagsOf(filter['Tag']), ...tagsOf(and['Tag']) };
  const rule: LifecycleRule = {
    id,
    enabled: status === 'Enabled',
    prefix: asText(filter['Prefix']) ?? asText(and['Prefix']) ?? asText(r['Prefix']) ?? '',
    expiration_days: null,
    noncurrent_version_expiration_days: null,
    abort_incomplete_multipart_upload_days: null,
    tags: Object.keys(tags).length > 0 ? tags : null,
    object_size_greater_than: bytes(filter['ObjectSizeGreaterThan'] ?? and['ObjectSizeGreaterThan']),
    object_size_less_than: bytes(filter['ObjectSizeLessThan'] ?? and['ObjectSizeLessThan']),
  };
  if (r['Filter'] === undefined && r['Prefix'] !== undefined) rule.rule_prefix = true;
  const { object_size_greater_than: gt, object_size_less_than: lt } = rule;
  if (gt !== null && gt !== undefined && lt !== null && lt !== undefined && gt >= lt)
    throw s3Errors.invalidArgument('ObjectSizeGreaterThan must be less than ObjectSizeLessThan');

  const exp = r['Expiration'] as Xml | undefined;
  if (exp !== undefined) {
    rule.expiration_days = days(exp['Days'], 'Days', 'Expiration');
    rule.expiration_date = midnight(exp['Date']);
    const marker = asText(exp['ExpiredObjectDeleteMarker']);
    if (marker !== undefined && marker !== 'true' && marker !== 'false') throw s3Errors.malformedXml();
    rule.expired_object_delete_marker = marker === 'true';
    const given = [rule.expiration_days !== null, rule.expiration_date !== null, marker !== undefined];
    if (given.filter(Boolean).length !== 1)
      throw s3Errors.invalidArgument(
        'Exactly one of Days, Date or ExpiredObjectDeleteMarker is given in a Lifecycle Expiration Policy',
      );
    if (rule.expired_object_delete_marker && rule.tags)
      throw s3Errors.invalidRequest('ExpiredObjectDeleteMarker cannot be specified with object tags.');
  }
  const nc = r['NoncurrentVersionExpiration'] as Xml | undefined;
  if (nc !== undefined) {
    rule.noncurrent_version_expiration_days = days(
      nc['NoncurrentDays'],
      'NoncurrentDays',
      'NoncurrentVersionExpiration',
    );
    if (rule.noncurrent_version_expiration_days === null) throw s3Errors.malformedXml();
    rule.newer_noncurrent_versions = newerVersions(nc['NewerNoncurrentVersions']);
  }
  const ab = r['AbortIncompleteMultipartUpload'] as Xml | undefined;
  if (ab !== undefined) {
    rule.abort_incomplete_multipart_upload_days = days(
      ab['DaysAfterInitiation'],
      'DaysAfterInitiation',
      'AbortIncompleteMultipartUpload',
    );
    if (rule.abort_incomplete_multipart_upload_days === null) throw s3Errors.malformedXml();
    if (rule.tags || gt != null || lt != null)
      throw s3Errors.invalidRequest(
        'AbortIncompleteMultipartUpload cannot be specified with a filter by tags or object size.',
      );
  }
  parseTransitions(r, rule, midnight);
  const moves = r['Transition'] !== undefined || r['NoncurrentVersionTransition'] !== undefined;
  if (exp === undefined && nc === undefined && ab === undefined && !moves)
    throw s3Errors.invalidRequest('At least one action needs to be specified in a rule.');
  return rule;
}

export async function putLifecycle(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  checkTransitionMinimum(call.header(TRANSITION_MINIMUM_HEADER));
  const doc = parseXml((await call.readSmallBody()).toString('utf8'), 'LifecycleConfiguration');
  const rules = list(doc.Rule).map(parseRule);
  if (rules.length === 0 || rules.length > 1000) throw s3Errors.malformedXml();
  const ids = new Set(rules.map((r) => r.id));
  if (ids.size !== rules.length) throw s3Errors.invalidArgument('Rule ID must be unique.');
  await viaDirectory(call, () => call.env.directory.putLifecycle(bucket.name, rules));
  call.send(200, { [TRANSITION_MINIMUM_HEADER]: 'all_storage_classes_128K' });
}

function filterXml(r: LifecycleRule): string {
  const parts = [
    r.prefix ? el('Prefix', r.prefix) : '',
    ...Object.entries(r.tags ?? {}).map(([k, v]) => `<Tag>${el('Key', k)}${el('Value', v)}</Tag>`),
    r.object_size_greater_than != null ? el('ObjectSizeGreaterThan', r.object_size_greater_than) : '',
    r.object_size_less_than != null ? el('ObjectSizeLessThan', r.object_size_less_than) : '',
  ].filter(Boolean);
  if (parts.length === 0) return '<Filter><Prefix></Prefix></Filter>';
  return parts.length === 1
    ? `<Filter>${parts[0]}</Filter>`
    : `<Filter><And>${parts.join('')}</And></Filter>`;
}

export async function getLifecycle(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  if (!bucket.lifecycle || bucket.lifecycle.length === 0) throw s3Errors.noSuchLifecycle(bucket.name);
  const rules = bucket.lifecycle
    .map((r) => {
      const filter = r.rule_prefix ? el('Prefix', r.prefix) : filterXml(r);
      let x = el('ID', r.id) + filter + el('Status', r.enabled ? 'Enabled' : 'Disabled');
      if (r.expiration_days !== null) x += `<Expiration>${el('Days', r.expiration_days)}</Expiration>`;
      else if (r.expiration_date != null)
        x += `<Expiration>${el('Date', new Date(r.expiration_date).toISOString())}</Expiration>`;
      else if (r.expired_object_delete_marker)
        x += '<Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>';
      x += transitionsXml(r);
      if (r.noncurrent_version_expiration_days !== null) {
        const newer =
          r.newer_noncurrent_versions != null
            ? el('NewerNoncurrentVersions', r.newer_noncurrent_versions)
            : '';
        x += `<NoncurrentVersionExpiration>${el('NoncurrentDays', r.noncurrent_version_expiration_days)}${newer}</NoncurrentVersionExpiration>`;
      }
      if (r.abort_incomplete_multipart_upload_days !== null) {
        x += `<AbortIncompleteMultipartUpload>${el('DaysAfterInitiation', r.abort_incomplete_multipart_upload_days)}</AbortIncompleteMultipartUpload>`;
      }
      return `<Rule>${x}</Rule>`;
    })
    .join('');
  call.xml(200, 'LifecycleConfiguration', rules, { [TRANSITION_MINIMUM_HEADER]: 'all_storage_classes_128K' });
}

export async function deleteLifecycle(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  await viaDirectory(call, () => call.env.directory.putLifecycle(bucket.name, null));
  call.send(204);
}
