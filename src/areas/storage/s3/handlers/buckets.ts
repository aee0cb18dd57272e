import type { BucketAccessChange, ObjectOwnership } from '../../data-plane-contract.js';
import { isS3BucketName } from '../../validation.js';
import { accountGrant, isPublicGrant, requestedAcl, splitBucketAcl } from '../acl.js';
import type { S3Call } from '../context.js';
import { fromAppError, S3Error, s3Errors } from '../errors.js';
import { grantsToOthers } from '../object-acl.js';
import { guardVersionDelete } from '../object-lock.js';
import { asText, el, parseXml } from '../xml.js';
import { refOf } from './object-lookup.js';

const iso = (ms: number) => new Date(Number(ms)).toISOString();

export async function listBuckets(call: S3Call): Promise<void> {
  const p = call.principal;
  if (p.kind === 'anonymous') throw s3Errors.accessDenied();
  const all = await call.env.directory.listBuckets(p.key.customerId);
  // Keys see the buckets they hold grants on; s3:ListAllMyBuckets shows every bucket.
  const seesAll = p.key.accountActions?.includes('s3:ListAllMyBuckets') ?? false;
  const prefix = call.query.get('prefix') ?? '';
  const region = call.query.get('bucket-region');
  const visible = all
    .filter((b) => seesAll || p.key.grants.some((g) => g.bucket === '*' || g.bucket === b.name))
    .filter((b) => b.name.startsWith(prefix) && (!region || region === call.env.settings.regions[0]))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const page = bucketPage(
    call,
    visible.map((b) => b.name),
  );
  const shown = visible.slice(page.start, page.end);
  const owner = `<Owner>${el('ID', p.key.customerId)}${el('DisplayName', p.key.customerDisplayName)}</Owner>`;
  const list = shown
    .map(
      (b) =>
        `<Bucket>${el('Name', b.name)}${el('CreationDate', iso(b.createdAt))}${el('BucketRegion', call.env.settings.regions[0]!)}</Bucket>`,
    )
    .join('');
  const more = page.end < visible.length ? el('ContinuationToken', tokenOf(shown.at(-1)!.name)) : '';
  const prefixXml = call.query.has('prefix') ? el('Prefix', prefix) : '';
  call.xml(200, 'ListAllMyBucketsResult', `${owner}<Buckets>${list}</Buckets>${more}${prefixXml}`);
}

const tokenOf = (name: string) => Buffer.from(name).toString('base64url');

/** ListBuckets paging (`max-buckets` 1-10000, `continuation-token`): which names a page shows. */
function bucketPage(call: S3Call, names: string[]): { start: number; end: number } {
  const maxText = call.query.get('max-buckets');
  const max = maxText === null ? 10_000 : Number(maxText);
  if (!/^\d+$/.test(maxText ?? '1') || max < 1 || max > 10_000)
    throw s3Errors.invalidArgument('max-buckets must be between 1 and 10000', 'max-buckets', maxText ?? '');
  const token = call.query.get('continuation-token');
  let start = 0;
  if (token !== null) {
    const after = Buffer.from(token, 'base64url').toString('utf8');
    if (!token || tokenOf(after) !== token)
      throw s3Errors.invalidArgument(
        'The continuation token provided is incorrect',
        'continuation-token',
        token,
      );
    start = names.findIndex((n) => n > after);
    if (start < 0) start = names.length;
  }
  return { start, end: Math.min(names.length, start + max) };
}

export async function headBucket(call: S3Call): Promise<void> {
  await call.requireBucket();
  call.send(200, { 'x-amz-bucket-region': call.env.settings.regions[0]! });
}

export async function getBucketLocation(call: S3Call): Promise<void> {
  await call.requireBucket();
  call.send(
    200,
    { 'content-type': 'application/xml' },
    `<?xml version="1.0" encoding="UTF-8"?>\n<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${call.env.settings.regions[0]}</LocationConstraint>`,
  );
}

export async function createBucket(call: S3Call): Promise<void> {
  const name = call.bucketName!;
  const p = call.principal;
  if (p.kind === 'anonymous') throw s3Errors.accessDenied();
  // AWS's naming rule (dots allowed, no upper case): said as S3 says it, not as InvalidArgument.
  if (!isS3BucketName(name)) throw s3Errors.invalidBucketName(name);
  const body = (await call.readSmallBody()).toString('utf8').trim();
  let region = call.env.settings.regions[0]!;
  if (body) {
    const doc = parseXml(body, 'CreateBucketConfiguration');
    const wanted = asText(doc.LocationConstraint);
    if (wanted) {
      if (!call.env.settings.regions.includes(wanted) && wanted !== 'no') {
        throw new S3Error(
          'InvalidLocationConstraint',
          400,
          'The specified location-constraint is not valid',
          { LocationConstraint: wanted },
        );
      }
      region = wanted;
    }
  }
  const existing = await call.env.directory.findBucket(name);
  if (existing) {
    if (existing.customerId === p.key.customerId) {
      // AWS's legacy rule: in us-east-1 creating a bucket you already own is 200 and changes nothing.
      if (p.credential.region === 'us-east-1') return call.send(200, { location: `/${name}` });
      throw s3Errors.bucketAlreadyOwnedByYou(name);
    }
    throw s3Errors.bucketAlreadyExists(name);
  }
  if (!p.key.mayCreateBuckets) throw s3Errors.accessDenied();
  // Object lock is chosen here, for good; it turns versioning on (S3's rule).
  const lockHeader = call.header('x-amz-bucket-object-lock-enabled');
  if (lockHeader !== undefined && !/^(true|false)$/i.test(lockHeader))
    throw s3Errors.invalidArgument(
      'Invalid x-amz-bucket-object-lock-enabled value',
      'x-amz-bucket-object-lock-enabled',
      lockHeader,
    );
  const objectLock = lockHeader?.toLowerCase() === 'true';
  const access = accessAtCreation(call, p.key.customerId);
  try {
    await call.env.directory.createBucketViaS3(p.key.customerId, name, region, p.key.accessKeyId, objectLock);
    if (access) await call.env.directory.putBucketAccess(name, access);
  } catch (err) {
    throw fromAppError(err, name) ?? err;
  }
  // The creating key now holds a grant on the bucket: the next request must see it, even before
  // the change notice arrives (PostgreSQL delivers it asynchronously).
  call.env.cache.forgetKey(p.key.accessKeyId);
  call.env.cache.forgetBucket(name);
  call.send(200, { location: `/${name}` });
}

export async function deleteBucket(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  if (!(await call.env.objects.repo.isEmpty(bucket.id))) throw s3Errors.bucketNotEmpty(bucket.name);
  try {
    await call.env.directory.deleteBucketViaS3(bucket.customerId, bucket.name);
  } catch (err) {
    throw fromAppError(err, bucket.name) ?? err;
  }
  call.env.cache.forgetBucket(bucket.name);
  call.send(204);
}

/** DeleteObjects: up to 1000 keys in one request, each answered on its own. */
export async function deleteObjects(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket({ perObject: true });
  // Keys are bytes: never trimmed (`' '` and `'_ '` are keys a client must be able to delete).
  const doc = parseXml((await call.readSmallBody()).toString('utf8'), 'Delete', 'exact');
  const items: { key: string; versionId: string | null }[] = (
    Array.isArray(doc.Object) ? doc.Object : []
  ).map((o: Record<string, unknown>) => {
    const key = asText(o['Key']);
    if (key === undefined) throw s3Errors.malformedXml();
    return { key, versionId: asText(o['VersionId']) ?? null };
  });
  if (items.length === 0 || items.length > 1000) throw s3Errors.malformedXml();
  const quiet = asText(doc.Quiet)?.trim() === 'true';
  let xml = '';
  for (const item of items) {
    try {
      call.authorize(
        bucket,
        item.versionId !== null ? 's3:DeleteObjectVersion' : 's3:DeleteObject',
        item.key,
      );
      if (item.versionId !== null) {
        const gone = await call.env.objects.deleteVersion(refOf(bucket), item.key, item.versionId, (row) =>
          guardVersionDelete(call, bucket, row),
        );
        if (!quiet) {
          xml += `<Deleted>${el('Key', item.key)}${el('VersionId', item.versionId)}${gone?.deleteMarker ? el('DeleteMarker', true) + el('DeleteMarkerVersionId', item.versionId) : ''}</Deleted>`;
        }
      } else {
        const r = await call.env.objects.deleteCurrent(refOf(bucket), item.key);
        if (!quiet) {
          xml += `<Deleted>${el('Key', item.key)}${r.deleteMarker ? el('DeleteMarker', true) + el('DeleteMarkerVersionId', r.versionId) : ''}</Deleted>`;
        }
      }
    } catch (err) {
      const e = err instanceof S3Error ? err : s3Errors.internal();
      if (!(err instanceof S3Error)) call.env.log.error({ err }, 'DeleteObjects item failed');
      xml += `<Error>${el('Key', item.key)}${item.versionId ? el('VersionId', item.versionId) : ''}${el('Code', e.code)}${el('Message', e.message)}</Error>`;
    }
  }
  call.xml(200, 'DeleteResult', xml);
}

/**
 * `x-amz-object-ownership` and an ACL (`x-amz-acl`, `x-amz-grant-*`) on CreateBucket. As on AWS,
 * a new bucket is BucketOwnerEnforced (ACLs off) unless the request asks otherwise or the operator
 * chose another default (FJORD_S3_DEFAULT_OBJECT_OWNERSHIP), and an ACL other than private needs
 * ACLs on.
 */
function accessAtCreation(call: S3Call, owner: string): BucketAccessChange | null {
  const grants = requestedAcl(call, owner) ?? [accountGrant(owner, 'FULL_CONTROL')];
  const others = grantsToOthers(grants, owner, owner);
  const split = splitBucketAcl(grants, owner);
  const ownerAsUsual = split.ownerPermissions.length === 1 && split.ownerPermissions[0] === 'FULL_CONTROL';
  const asked = call.header('x-amz-object-ownership');
  if (asked !== undefined && !['BucketOwnerEnforced', 'BucketOwnerPreferred', 'ObjectWriter'].includes(asked))
    throw s3Errors.invalidArgument('Invalid x-amz-object-ownership header', 'x-amz-object-ownership', asked);
  const ownership = (asked ??
    call.env.settings.defaultObjectOwnership ??
    'BucketOwnerEnforced') as ObjectOwnership;
  if (others.length > 0 && ownership === 'BucketOwnerEnforced')
    throw new S3Error(
      'InvalidBucketAclWithObjectOwnership',
      400,
      "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting",
    );
  if (others.some(isPublicGrant) && call.env.settings.publicAccessBlock?.blockPublicAcls)
    throw s3Errors.publicAclBlocked();
  if (asked === undefined && others.length === 0 && ownerAsUsual) return null;
  // With ACLs off the owner's FULL_CONTROL is all a bucket's ACL can say.
  const acl = ownership === 'BucketOwnerEnforced' ? { ...split, ownerPermissions: undefined } : split;
  return { ...(asked !== undefined ? { objectOwnership: ownership } : {}), ...acl };
}
