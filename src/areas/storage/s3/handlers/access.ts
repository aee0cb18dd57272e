import type {
  AclGrant,
  BucketRecord,
  ObjectOwnership,
  PublicAccessBlock,
} from '../../data-plane-contract.js';
import {
  aclXml,
  bucketGrants,
  isPublicGrant,
  parseAccessControlPolicy,
  requestedAcl,
  splitBucketAcl,
} from '../acl.js';
import type { S3Call } from '../context.js';
import { fromAppError, S3Error, s3Errors } from '../errors.js';
import { effectiveBlock } from '../permissions.js';
import { asText, el, parseXml } from '../xml.js';
import { findObject } from './object-lookup.js';

/** Bucket and object ACLs, ownership controls and the public access block. */

const OWNERSHIPS: ObjectOwnership[] = ['BucketOwnerEnforced', 'BucketOwnerPreferred', 'ObjectWriter'];

async function viaDirectory(call: S3Call, bucket: BucketRecord, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (err) {
    throw fromAppError(err, bucket.name) ?? err;
  }
  call.env.cache.forgetBucket(bucket.name);
}

const ownerName = (call: S3Call, bucket: BucketRecord) =>
  call.principal.kind === 'key' && call.principal.key.customerId === bucket.customerId
    ? call.principal.key.customerDisplayName
    : bucket.customerId;

/**
 * Refuses grants the bucket does not take: ACLs off (BucketOwnerEnforced), public ones under the
 * block, and grants to an account that does not exist (AWS: InvalidArgument, "Invalid id").
 */
export async function checkGrants(call: S3Call, bucket: BucketRecord, grants: AclGrant[]): Promise<void> {
  if (grants.length === 0) return;
  if (bucket.objectOwnership === 'BucketOwnerEnforced') throw s3Errors.aclNotSupported();
  if (
    grants.some(isPublicGrant) &&
    effectiveBlock(bucket, call.env.settings.publicAccessBlock).blockPublicAcls
  )
    throw s3Errors.publicAclBlocked();
  const exists = call.env.directory.accountExists?.bind(call.env.directory);
  if (!exists) return;
  for (const g of grants) {
    if (g.grantee.type !== 'CanonicalUser' || g.grantee.id === bucket.customerId) continue;
    if (!(await exists(g.grantee.id)))
      throw s3Errors.invalidArgument('Invalid id', 'CanonicalUser/ID', g.grantee.id);
  }
}

/**
 * The ACL an upload asks for (`x-amz-acl`, `x-amz-grant-*`), checked, as the JSON stored on the
 * version; null for private. Asking for one needs s3:PutObjectAcl, as on AWS.
 */
export async function aclForWrite(call: S3Call, bucket: BucketRecord, key: string): Promise<string | null> {
  const grants = requestedAcl(call);
  if (grants === null) return null;
  await checkGrants(call, bucket, grants);
  if (grants.length === 0) return null;
  call.authorize(bucket, 's3:PutObjectAcl', key);
  return JSON.stringify(grants);
}

/** The grants a PutBucketAcl/PutObjectAcl request carries: headers or the document, not both. */
async function grantsOfRequest(call: S3Call, bucket: BucketRecord): Promise<AclGrant[]> {
  const fromHeaders = requestedAcl(call);
  const body = (await call.readSmallBody()).toString('utf8').trim();
  if (fromHeaders !== null && body)
    throw new S3Error('UnexpectedContent', 400, 'This request does not support content');
  if (fromHeaders !== null) return fromHeaders;
  if (!body) throw s3Errors.malformedAcl();
  return parseAccessControlPolicy(body, bucket.customerId);
}

export async function getBucketAcl(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const grants =
    bucket.objectOwnership === 'BucketOwnerEnforced'
      ? bucketGrants({ ...bucket, acl: [] })
      : bucketGrants(bucket);
  call.xml(200, 'AccessControlPolicy', aclXml(bucket.customerId, ownerName(call, bucket), grants));
}

export async function putBucketAcl(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const grants = await grantsOfRequest(call, bucket);
  await checkGrants(call, bucket, grants);
  await viaDirectory(call, bucket, () =>
    call.env.directory.putBucketAccess(bucket.name, splitBucketAcl(grants)),
  );
  call.send(200);
}

export async function getObjectAcl(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket({
    objectAcl: true,
  });
  const row = await call.checkObjectAcl(() =>
    findObject(call, bucket, call.key!, call.query.get('versionId')),
  );
  const aclsOn = bucket.objectOwnership !== 'BucketOwnerEnforced';
  const own = aclsOn && row.acl ? (JSON.parse(row.acl) as AclGrant[]) : [];
  // With ACLs off, a bucket made public through the control API shows its objects as public-read
  // (anyone reads them); with ACLs on, an object's ACL is its own, whatever the bucket's says.
  const grants = !aclsOn && bucket.isPublic ? bucketGrants({ ...bucket, acl: [] }) : own;
  const headers: Record<string, string> =
    row.version_id !== 'null' ? { 'x-amz-version-id': row.version_id } : {};
  call.xml(200, 'AccessControlPolicy', aclXml(bucket.customerId, ownerName(call, bucket), grants), headers);
}

export async function putObjectAcl(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket({
    objectAcl: true,
  });
  const row = await call.checkObjectAcl(() =>
    findObject(call, bucket, call.key!, call.query.get('versionId')),
  );
  const grants = await grantsOfRequest(call, bucket);
  await checkGrants(call, bucket, grants);
  await call.env.objects.repo.updateAcl(row.id, grants.length ? JSON.stringify(grants) : null);
  call.send(200, row.version_id !== 'null' ? { 'x-amz-version-id': row.version_id } : {});
}

// Ownership controls

export async function getOwnershipControls(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  if (!bucket.objectOwnership) throw s3Errors.noOwnershipControls(bucket.name);
  call.xml(200, 'OwnershipControls', `<Rule>${el('ObjectOwnership', bucket.objectOwnership)}</Rule>`);
}

export async function putOwnershipControls(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const doc = parseXml((await call.readSmallBody()).toString('utf8'), 'OwnershipControls');
  const rules = Array.isArray(doc.Rule) ? doc.Rule : [];
  const value = asText(rules[0]?.ObjectOwnership) as ObjectOwnership | undefined;
  if (rules.length !== 1 || !value || !OWNERSHIPS.includes(value)) throw s3Errors.malformedXml();
  // AWS refuses to turn ACLs off while the bucket's ACL still grants to others (public-read too).
  const aclGrantsOthers =
    bucket.acl.length > 0 || (bucket.objectOwnership !== 'BucketOwnerEnforced' && bucket.isPublic);
  if (value === 'BucketOwnerEnforced' && aclGrantsOthers)
    throw new S3Error(
      'InvalidBucketAclWithObjectOwnership',
      400,
      "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting",
    );
  await viaDirectory(call, bucket, () =>
    call.env.directory.putBucketAccess(bucket.name, { objectOwnership: value }),
  );
  call.send(200);
}

export async function deleteOwnershipControls(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  await viaDirectory(call, bucket, () =>
    call.env.directory.putBucketAccess(bucket.name, { objectOwnership: null }),
  );
  call.send(204);
}

// Public access block

const BLOCK_FIELDS: [keyof PublicAccessBlock, string][] = [
  ['blockPublicAcls', 'BlockPublicAcls'],
  ['ignorePublicAcls', 'IgnorePublicAcls'],
  ['blockPublicPolicy', 'BlockPublicPolicy'],
  ['restrictPublicBuckets', 'RestrictPublicBuckets'],
];

export async function getPublicAccessBlock(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const block = bucket.publicAccessBlock;
  if (!block) throw s3Errors.noPublicAccessBlock(bucket.name);
  call.xml(
    200,
    'PublicAccessBlockConfiguration',
    BLOCK_FIELDS.map(([field, name]) => el(name, block[field])).join(''),
  );
}

export async function putPublicAccessBlock(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const doc = parseXml((await call.readSmallBody()).toString('utf8'), 'PublicAccessBlockConfiguration');
  const block = {} as PublicAccessBlock;
  for (const [field, name] of BLOCK_FIELDS) {
    const v = asText(doc[name]);
    if (v !== undefined && !/^(true|false)$/i.test(v)) throw s3Errors.malformedXml();
    block[field] = v?.toLowerCase() === 'true';
  }
  await viaDirectory(call, bucket, () =>
    call.env.directory.putBucketAccess(bucket.name, { publicAccessBlock: block }),
  );
  call.send(200);
}

export async function deletePublicAccessBlock(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  await viaDirectory(call, bucket, () =>
    call.env.directory.putBucketAccess(bucket.name, { publicAccessBlock: null }),
  );
  call.send(204);
}
