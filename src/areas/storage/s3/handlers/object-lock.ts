import type { ObjectLockDefault } from '../../data-plane-contract.js';
import { lockText, type ObjectLock, parseLock } from '../../objects/lock.js';
import type { S3Call } from '../context.js';
import { S3Error, s3Errors } from '../errors.js';
import {
  bypassesGovernance,
  lockDenied,
  lockMode,
  missingLockConfiguration,
  retainUntil,
} from '../object-lock.js';
import { asText, el, parseXml } from '../xml.js';
import { viaDirectory } from './configuration.js';
import { findObject } from './object-lookup.js';

/** Object lock's bucket configuration, per-version retention and legal hold (S3's operations). */

const MAX_DAYS = 36_500;
const MAX_YEARS = 100;

const noLockOnObject = () =>
  new S3Error(
    'NoSuchObjectLockConfiguration',
    404,
    'The specified object does not have a ObjectLock configuration',
  );

const versionHeader = (versionId: string): Record<string, string> =>
  versionId !== 'null' ? { 'x-amz-version-id': versionId } : {};

export async function getObjectLockConfiguration(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  if (!bucket.objectLockEnabled) {
    throw new S3Error(
      'ObjectLockConfigurationNotFoundError',
      404,
      'Object Lock configuration does not exist for this bucket',
      { BucketName: bucket.name },
    );
  }
  const d = bucket.objectLockDefault;
  let rule = '';
  if (d) {
    const period = d.days !== null ? el('Days', d.days) : el('Years', d.years ?? 0);
    rule = `<Rule><DefaultRetention>${el('Mode', d.mode)}${period}</DefaultRetention></Rule>`;
  }
  call.xml(200, 'ObjectLockConfiguration', el('ObjectLockEnabled', 'Enabled') + rule);
}

function period(v: unknown, max: number): number | null {
  if (v === undefined) return null;
  const t = asText(v) ?? '';
  if (!/^-?\d+$/.test(t)) throw s3Errors.malformedXml();
  const n = Number(t);
  if (n <= 0) throw s3Errors.invalidArgument('Default retention period must be a positive integer value.');
  if (n > max) throw s3Errors.invalidArgument('Default retention period is too large.');
  return n;
}

/**
 * PutObjectLockConfiguration: the default retention of new versions. Object lock is chosen when
 * the bucket is created (`x-amz-bucket-object-lock-enabled`), or turned on here, for good, on a
 * bucket whose versioning is Enabled.
 */
export async function putObjectLockConfiguration(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const doc = parseXml((await call.readSmallBody()).toString('utf8'), 'ObjectLockConfiguration');
  if (asText(doc.ObjectLockEnabled) !== 'Enabled') throw s3Errors.malformedXml();
  // An existing bucket may turn object lock on, for good, once its versioning is Enabled (as on AWS).
  if (!bucket.objectLockEnabled && bucket.versioning !== 'Enabled')
    throw new S3Error(
      'InvalidBucketState',
      409,
      "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration",
    );
  let rule: ObjectLockDefault | null = null;
  // The parser makes every <Rule> a list (lifecycle has many); this document has at most one.
  const rules = (Array.isArray(doc.Rule) ? doc.Rule : doc.Rule === undefined ? [] : [doc.Rule]) as Record<
    string,
    unknown
  >[];
  if (rules.length > 1) throw s3Errors.malformedXml();
  const r = rules[0];
  if (r !== undefined) {
    const d = (r['DefaultRetention'] ?? {}) as Record<string, unknown>;
    const days = period(d['Days'], MAX_DAYS);
    const years = period(d['Years'], MAX_YEARS);
    if ((days === null) === (years === null)) throw s3Errors.malformedXml();
    const mode = asText(d['Mode']);
    if (mode !== 'GOVERNANCE' && mode !== 'COMPLIANCE') throw s3Errors.malformedXml();
    rule = { mode, days, years };
  }
  await viaDirectory(call, () =>
    call.env.directory.putObjectLockDefault(bucket.name, rule, !bucket.objectLockEnabled),
  );
  call.send(200);
}

export async function getObjectRetention(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  if (!bucket.objectLockEnabled) throw missingLockConfiguration();
  const row = await findObject(call, bucket, call.key!, call.query.get('versionId'));
  const lock = parseLock(row.object_lock);
  if (!lock?.mode || lock.until === null) throw noLockOnObject();
  call.xml(
    200,
    'Retention',
    el('Mode', lock.mode) + el('RetainUntilDate', new Date(lock.until).toISOString()),
    versionHeader(row.version_id),
  );
}

/**
 * PutObjectRetention. Lengthening is always allowed. COMPLIANCE can never be shortened, removed or
 * turned into GOVERNANCE while it runs, not even by the owner; GOVERNANCE can be shortened,
 * removed or turned into COMPLIANCE only with the bypass header and permission.
 */
export async function putObjectRetention(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  if (!bucket.objectLockEnabled) throw missingLockConfiguration();
  const row = await findObject(call, bucket, call.key!, call.query.get('versionId'));
  const doc = parseXml((await call.readSmallBody()).toString('utf8'), 'Retention');
  const modeText = asText(doc.Mode);
  const untilText = asText(doc.RetainUntilDate);
  if ((modeText === undefined) !== (untilText === undefined)) throw s3Errors.malformedXml();
  // The XML schema names the two modes, in capitals: anything else is MalformedXML, as on AWS.
  if (modeText !== undefined && modeText !== 'GOVERNANCE' && modeText !== 'COMPLIANCE')
    throw s3Errors.malformedXml();
  const next =
    modeText === undefined
      ? null
      : {
          mode: lockMode(modeText, 'Mode'),
          until: retainUntil(call, untilText!, 'RetainUntilDate'),
        };
  const current = parseLock(row.object_lock);
  const now = call.env.clock.nowMs();
  if (current?.mode && current.until !== null && current.until > now) {
    // Any change of a running GOVERNANCE retention but a longer one needs the bypass, even to
    // COMPLIANCE (AWS's rule); COMPLIANCE may only be lengthened.
    const weaker = next === null || next.until < current.until || next.mode !== current.mode;
    if (weaker && (current.mode === 'COMPLIANCE' || !bypassesGovernance(call, bucket))) throw lockDenied();
  }
  const lock: ObjectLock = {
    mode: next?.mode ?? null,
    until: next?.until ?? null,
    legalHold: current?.legalHold ?? false,
  };
  if (!(await call.env.objects.repo.updateLock(row.id, row.object_lock, lockText(lock))))
    throw new S3Error(
      'OperationAborted',
      409,
      'A conflicting operation is in progress on this object. Please try again.',
    );
  call.send(200, versionHeader(row.version_id));
}

export async function getObjectLegalHold(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  if (!bucket.objectLockEnabled) throw missingLockConfiguration();
  const row = await findObject(call, bucket, call.key!, call.query.get('versionId'));
  const lock = parseLock(row.object_lock);
  if (!lock) throw noLockOnObject();
  call.xml(200, 'LegalHold', el('Status', lock.legalHold ? 'ON' : 'OFF'), versionHeader(row.version_id));
}

export async function putObjectLegalHold(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  if (!bucket.objectLockEnabled) throw missingLockConfiguration();
  const row = await findObject(call, bucket, call.key!, call.query.get('versionId'));
  const doc = parseXml((await call.readSmallBody()).toString('utf8'), 'LegalHold');
  const status = asText(doc.Status);
  if (status !== 'ON' && status !== 'OFF') throw s3Errors.malformedXml();
  const current = parseLock(row.object_lock) ?? { mode: null, until: null, legalHold: false };
  // Kept even when OFF and nothing else is set: GetObjectLegalHold then answers OFF, as on S3,
  // where a version that never had a legal hold answers NoSuchObjectLockConfiguration.
  const next = JSON.stringify({ ...current, legalHold: status === 'ON' });
  if (!(await call.env.objects.repo.updateLock(row.id, row.object_lock, next)))
    throw new S3Error(
      'OperationAborted',
      409,
      'A conflicting operation is in progress on this object. Please try again.',
    );
  call.send(200, versionHeader(row.version_id));
}
