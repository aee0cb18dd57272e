import type { BucketRecord } from '../../data-plane-contract.js';
import type { S3Call } from '../context.js';
import { fromAppError, s3Errors } from '../errors.js';
import { effectiveBlock, policyOf } from '../permissions.js';
import { MalformedPolicyError, parsePolicy } from '../policy.js';
import { isPublicPolicy } from '../policy-eval.js';
import { el } from '../xml.js';

/** Get/Put/Delete bucket policy and GetBucketPolicyStatus. */

async function store(call: S3Call, bucket: BucketRecord, policy: string | null): Promise<void> {
  try {
    await call.env.directory.putBucketAccess(bucket.name, { policy });
  } catch (err) {
    throw fromAppError(err, bucket.name) ?? err;
  }
  call.env.cache.forgetBucket(bucket.name);
}

export async function getBucketPolicy(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  if (!bucket.policy) throw s3Errors.noSuchBucketPolicy(bucket.name);
  call.send(200, { 'content-type': 'application/json' }, bucket.policy);
}

export async function putBucketPolicy(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const text = (await call.readSmallBody(64 * 1024)).toString('utf8');
  let policy: ReturnType<typeof parsePolicy>;
  try {
    policy = parsePolicy(text, bucket.name);
  } catch (err) {
    if (err instanceof MalformedPolicyError) throw s3Errors.malformedPolicy(err.message);
    throw err;
  }
  if (isPublicPolicy(policy) && effectiveBlock(bucket, call.env.settings.publicAccessBlock).blockPublicPolicy)
    throw s3Errors.publicPolicyBlocked();
  await store(call, bucket, text);
  call.send(204);
}

export async function deleteBucketPolicy(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  if (bucket.policy) await store(call, bucket, null);
  call.send(204);
}

export async function getBucketPolicyStatus(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const policy = policyOf(bucket);
  if (!policy) throw s3Errors.noSuchBucketPolicy(bucket.name);
  call.xml(200, 'PolicyStatus', el('IsPublic', isPublicPolicy(policy)));
}
