import type { CorsRule } from '../../data-plane-contract.js';
import type { S3Call } from '../context.js';
import { fromAppError, S3Error, s3Errors } from '../errors.js';
import { asText, el, parseXml } from '../xml.js';
import { checkTags } from './object-headers.js';
import { findObject } from './object-lookup.js';

/** Bucket sub-resources that mirror the control API's documents (CORS, versioning, lifecycle). */

const texts = (v: unknown): string[] =>
  (Array.isArray(v) ? v : v === undefined ? [] : [v]).map((x) => asText(x) ?? '');

export async function viaDirectory(call: S3Call, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (err) {
    const s3 = fromAppError(err);
    if (s3 && s3.code !== 'NoSuchKey') throw s3;
    if (s3) throw s3Errors.noSuchBucket(call.bucketName!);
    throw err;
  }
  call.env.cache.forgetBucket(call.bucketName!);
}

export async function getCors(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  if (!bucket.cors || bucket.cors.length === 0) throw s3Errors.noSuchCors(bucket.name);
  const rules = bucket.cors
    .map((r) => {
      let x = r.id ? el('ID', r.id) : '';
      x += r.allowed_headers.map((h) => el('AllowedHeader', h)).join('');
      x += r.allowed_methods.map((m) => el('AllowedMethod', m)).join('');
      x += r.allowed_origins.map((o) => el('AllowedOrigin', o)).join('');
      x += r.expose_headers.map((h) => el('ExposeHeader', h)).join('');
      if (r.max_age_seconds !== null) x += el('MaxAgeSeconds', r.max_age_seconds);
      return `<CORSRule>${x}</CORSRule>`;
    })
    .join('');
  call.xml(200, 'CORSConfiguration', rules);
}

export async function putCors(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const doc = parseXml((await call.readSmallBody()).toString('utf8'), 'CORSConfiguration');
  const rules: CorsRule[] = (Array.isArray(doc.CORSRule) ? doc.CORSRule : []).map(
    (r: Record<string, unknown>) => {
      const maxAge = asText(r['MaxAgeSeconds']);
      if (maxAge !== undefined && !/^\d+$/.test(maxAge)) throw s3Errors.malformedXml();
      const rule: CorsRule = {
        allowed_origins: texts(r['AllowedOrigin']),
        allowed_methods: texts(r['AllowedMethod']),
        allowed_headers: texts(r['AllowedHeader']),
        expose_headers: texts(r['ExposeHeader']),
        max_age_seconds: maxAge === undefined ? null : Number(maxAge),
      };
      const id = asText(r['ID']);
      if (id) rule.id = id;
      if (rule.allowed_origins.length === 0 || rule.allowed_methods.length === 0)
        throw s3Errors.malformedXml();
      return rule;
    },
  );
  if (rules.length === 0) throw s3Errors.malformedXml();
  await viaDirectory(call, () => call.env.directory.putCors(bucket.name, rules));
  call.send(200);
}

export async function deleteCors(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  await viaDirectory(call, () => call.env.directory.deleteCors(bucket.name));
  call.send(204);
}

export async function getVersioning(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  call.xml(
    200,
    'VersioningConfiguration',
    bucket.versioning === 'Unversioned' ? '' : el('Status', bucket.versioning),
  );
}

export async function putVersioning(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const doc = parseXml((await call.readSmallBody()).toString('utf8'), 'VersioningConfiguration');
  const status = asText(doc.Status);
  if (status !== 'Enabled' && status !== 'Suspended') throw s3Errors.malformedXml();
  if (status === 'Suspended' && bucket.objectLockEnabled) {
    throw new S3Error(
      'InvalidBucketState',
      409,
      'An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.',
    );
  }
  await viaDirectory(call, () => call.env.directory.putVersioning(bucket.name, status));
  call.send(200);
}

// ---- object tagging ------------------------------------------------------------------

export async function getObjectTagging(call: S3Call): Promise<void> {
  // With ACLs on, an object another account owns answers to its ACL, which grants no tag reads:
  // its tags are its owner's alone, as on AWS (the bucket's owner included).
  const bucket = await call.requireBucket({ objectAcl: true });
  const row = await call.checkObjectAcl(() =>
    findObject(call, bucket, call.key!, call.query.get('versionId')),
  );
  const tags = JSON.parse(row.tags) as Record<string, string>;
  const headers: Record<string, string> =
    row.version_id !== 'null' ? { 'x-amz-version-id': row.version_id } : {};
  call.xml(200, 'Tagging', tagSetXml(tags), headers);
}

/** A `Tagging` document's tag set, without duplicate keys. */
async function tagSetOfBody(call: S3Call): Promise<Record<string, string>> {
  const doc = parseXml((await call.readSmallBody()).toString('utf8'), 'Tagging');
  const set = (doc.TagSet ?? {}) as Record<string, unknown>;
  const tags: Record<string, string> = {};
  for (const t of (Array.isArray(set['Tag']) ? set['Tag'] : []) as Record<string, unknown>[]) {
    const k = asText(t['Key']);
    if (k === undefined) throw s3Errors.malformedXml();
    if (k in tags) throw s3Errors.invalidTag('Cannot provide multiple Tags with the same key');
    tags[k] = asText(t['Value']) ?? '';
  }
  return tags;
}

/** A tag set as S3 lists it: in key order, not in the order the tags were set. */
const tagSetXml = (tags: Record<string, string>) =>
  `<TagSet>${Object.entries(tags)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `<Tag>${el('Key', k)}${el('Value', v)}</Tag>`)
    .join('')}</TagSet>`;

export async function putObjectTagging(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const row = await findObject(call, bucket, call.key!, call.query.get('versionId'));
  const tags = await tagSetOfBody(call);
  checkTags(tags);
  await call.env.objects.repo.updateTags(row.id, JSON.stringify(tags));
  const headers: Record<string, string> =
    row.version_id !== 'null' ? { 'x-amz-version-id': row.version_id } : {};
  call.send(200, headers);
}

export async function deleteObjectTagging(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const row = await findObject(call, bucket, call.key!, call.query.get('versionId'));
  await call.env.objects.repo.updateTags(row.id, '{}');
  const headers: Record<string, string> =
    row.version_id !== 'null' ? { 'x-amz-version-id': row.version_id } : {};
  call.send(204, headers);
}

// Bucket tagging: up to 50 tags (AWS's limit for a bucket), keys 1-128 and values 0-256 characters.

const MAX_BUCKET_TAGS = 50;

export async function getBucketTagging(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  if (!bucket.tags || Object.keys(bucket.tags).length === 0) throw s3Errors.noSuchTagSet();
  call.xml(200, 'Tagging', tagSetXml(bucket.tags));
}

export async function putBucketTagging(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const tags = await tagSetOfBody(call);
  const entries = Object.entries(tags);
  if (entries.length > MAX_BUCKET_TAGS)
    throw s3Errors.invalidTag(`Bucket tag count cannot be greater than ${MAX_BUCKET_TAGS}`);
  for (const [k, v] of entries) {
    if (k.length === 0 || k.length > 128)
      throw s3Errors.invalidTag('The TagKey you have provided is invalid');
    if (v.length > 256) throw s3Errors.invalidTag('The TagValue you have provided is invalid');
    if (k.startsWith('aws:')) throw s3Errors.invalidTag('System tags cannot be added/updated by requester');
  }
  await viaDirectory(call, () => call.env.directory.putBucketTags(bucket.name, tags));
  call.send(204);
}

export async function deleteBucketTagging(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  await viaDirectory(call, () => call.env.directory.putBucketTags(bucket.name, null));
  call.send(204);
}
