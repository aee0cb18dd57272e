import type { Principal } from './auth.js';
import type { S3Call } from './context.js';
import { S3Error, s3Errors } from './errors.js';
import { signV2 } from './sigv2.js';
import { amzDateToMs, type Credential, hmacHex, safeEqual, signingKey, toAmzDate } from './sigv4.js';

/**
 * The signed policy of a browser POST upload, in either signature version: version 4
 * (`x-amz-algorithm`, `x-amz-credential`, `x-amz-date`, `x-amz-signature`) or version 2
 * (`AWSAccessKeyId`, `signature` = base64(HMAC-SHA1(secret, policy))). Both are checked against
 * the same policy conditions; the principal is the signing key, as for any signed request.
 */
export interface PostAuthorisation {
  principal: Principal;
  /** `content-length-range` of the policy, when it has one. */
  range: [number, number] | null;
}

/** Fields a policy need not name, besides `x-ignore-*`. */
const EXEMPT_V4 = new Set(['x-amz-signature', 'file', 'policy']);
const EXEMPT_V2 = new Set(['awsaccesskeyid', 'signature', 'file', 'policy']);

const policyError = (m: string) => new S3Error('AccessDenied', 403, `Invalid according to Policy: ${m}`);
/** A policy document that is not one, as S3 answers it: 400, before any condition is judged. */
const invalidPolicy = (m: string) => new S3Error('InvalidPolicyDocument', 400, `Invalid Policy: ${m}`);
/** S3's `expiration`: ISO 8601 in UTC, as `2026-11-26T12:00:00Z` or with milliseconds. */
const EXPIRATION = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?Z$/;

/** Null when the form carries no policy (an anonymous upload, left to the bucket's permissions). */
export async function authenticatePostForm(
  call: S3Call,
  fields: Map<string, string>,
  bucketName: string,
  key: string,
): Promise<PostAuthorisation | null> {
  const policyText = fields.get('policy');
  if (policyText === undefined) return null;
  const v2 = fields.has('awsaccesskeyid') && !fields.has('x-amz-algorithm');
  const principal = v2 ? await signedV2(call, fields, policyText) : await signedV4(call, fields, policyText);
  const nowMs = call.env.clock.nowMs();
  const range = checkPolicy(policyText, fields, bucketName, key, nowMs, v2 ? EXEMPT_V2 : EXEMPT_V4);
  return { principal, range };
}

async function signedV4(call: S3Call, fields: Map<string, string>, policyText: string): Promise<Principal> {
  const credential = fields.get('x-amz-credential') ?? '';
  const parts = credential.split('/');
  if (fields.get('x-amz-algorithm') !== 'AWS4-HMAC-SHA256' || parts.length < 5) {
    throw s3Errors.invalidArgument(
      'POST requires x-amz-algorithm AWS4-HMAC-SHA256 and x-amz-credential.',
      'x-amz-algorithm',
    );
  }
  const [date, region, service] = parts.slice(-4, -1) as [string, string, string];
  const accessKeyId = parts.slice(0, -4).join('/');
  const found = await call.env.cache.findAccessKey(accessKeyId);
  if (!found) throw s3Errors.invalidAccessKeyId();
  if (!call.env.settings.regions.includes(region) || service !== 's3')
    throw s3Errors.authorizationQueryParametersError(`Region ${region} is wrong.`);
  const expected = hmacHex(signingKey(found.secretKey, date, region, service), policyText);
  if (!safeEqual(expected, fields.get('x-amz-signature') ?? '')) throw s3Errors.signatureMismatch();
  if (amzDateToMs(fields.get('x-amz-date') ?? '') === null)
    throw s3Errors.invalidArgument('x-amz-date is not valid.', 'x-amz-date');
  return {
    kind: 'key',
    key: found,
    credential: postCredential(accessKeyId, date, region, fields.get('x-amz-date') ?? ''),
  };
}

async function signedV2(call: S3Call, fields: Map<string, string>, policyText: string): Promise<Principal> {
  const accessKeyId = fields.get('awsaccesskeyid') ?? '';
  const signature = fields.get('signature');
  if (signature === undefined)
    throw s3Errors.invalidArgument('Bucket POST must contain a field named signature.', 'signature', '');
  const found = await call.env.cache.findAccessKey(accessKeyId);
  if (!found) throw s3Errors.invalidAccessKeyId();
  if (!safeEqual(signV2(found.secretKey, policyText), signature)) {
    throw new S3Error(
      'SignatureDoesNotMatch',
      403,
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
      { AWSAccessKeyId: accessKeyId, StringToSign: policyText, SignatureProvided: signature },
    );
  }
  const now = toAmzDate(call.env.clock.nowMs());
  const credential = postCredential(accessKeyId, now.slice(0, 8), call.env.settings.regions[0] ?? '', now);
  return { kind: 'key', key: found, credential: { ...credential, version: 2 } };
}

function postCredential(accessKeyId: string, date: string, region: string, amzDate: string): Credential {
  return {
    kind: 'query',
    accessKeyId,
    date,
    region,
    service: 's3',
    signedHeaders: [],
    signature: '',
    amzDate,
    expiresSeconds: null,
    payloadHash: 'UNSIGNED-PAYLOAD',
  };
}

/**
 * Every condition of the policy against the form (with `bucket` and the final `key`), and every
 * form field against the policy: a field no condition names is refused, as S3 refuses it.
 */
function checkPolicy(
  policyText: string,
  fields: Map<string, string>,
  bucketName: string,
  key: string,
  nowMs: number,
  exempt: Set<string>,
): [number, number] | null {
  let policy: { expiration?: string; conditions?: unknown[] };
  try {
    policy = JSON.parse(Buffer.from(policyText, 'base64').toString('utf8'));
  } catch {
    throw s3Errors.invalidArgument('Invalid Policy: Invalid JSON.', 'policy');
  }
  if (policy === null || typeof policy !== 'object') throw invalidPolicy('Invalid JSON.');
  if (policy.expiration === undefined) throw invalidPolicy('Policy missing expiration.');
  const expires = EXPIRATION.test(String(policy.expiration)) ? Date.parse(policy.expiration) : Number.NaN;
  if (Number.isNaN(expires)) throw invalidPolicy(`Invalid 'expiration' value: '${policy.expiration}'`);
  // Field names of the document are case-sensitive: `CONDITIONS` is not `conditions`.
  if (!Array.isArray(policy.conditions)) throw invalidPolicy("Missing required field 'conditions'.");
  if (expires < nowMs) throw policyError('Policy expired.');
  let range: [number, number] | null = null;
  const values = new Map(fields);
  values.set('bucket', bucketName);
  values.set('key', key);
  const covered = new Set<string>(['bucket']);
  for (const c of policy.conditions) {
    if (Array.isArray(c)) {
      const [op, field, value] = c as [string, unknown, unknown];
      if (String(op).toLowerCase() === 'content-length-range') {
        if (c.length !== 3 || !Number.isInteger(Number(field)) || !Number.isInteger(Number(value)))
          throw invalidPolicy('Invalid content-length-range: two integers needed.');
        range = [Number(field), Number(value)];
        continue;
      }
      const name = String(field).replace(/^\$/, '').toLowerCase();
      covered.add(name);
      const actual = values.get(name) ?? '';
      if (op === 'eq' && actual !== String(value))
        throw policyError(`Policy Condition failed: ["eq", "$${name}", "${value}"]`);
      if (op === 'starts-with' && !actual.startsWith(String(value))) {
        throw policyError(`Policy Condition failed: ["starts-with", "$${name}", "${value}"]`);
      }
    } else if (c && typeof c === 'object') {
      if (Object.keys(c).length !== 1) throw invalidPolicy('A condition must name exactly one field.');
      for (const [field, value] of Object.entries(c as Record<string, unknown>)) {
        const name = field.toLowerCase();
        covered.add(name);
        if ((values.get(name) ?? '') !== String(value))
          throw policyError(`Policy Condition failed: ["eq", "$${name}", "${value}"]`);
      }
    }
  }
  for (const name of fields.keys()) {
    if (!exempt.has(name) && !name.startsWith('x-ignore-') && !covered.has(name)) {
      throw policyError(`Extra input fields: ${name}`);
    }
  }
  return range;
}
