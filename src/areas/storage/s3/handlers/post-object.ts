import { createHash } from 'node:crypto';
import type { ObjectAttributes } from '../../objects/object-store.js';
import { cannedGrants } from '../acl.js';
import type { S3Call } from '../context.js';
import { sealingFor } from '../encryption.js';
import { S3Error, s3Errors } from '../errors.js';
import { readPostForm } from '../form-data.js';
import { lockForWrite } from '../object-lock.js';
import { amzDateToMs, hmacHex, safeEqual, signingKey } from '../sigv4.js';
import { el } from '../xml.js';
import { checkGrants } from './access.js';
import { parseTagQuery, quoteEtag } from './object-headers.js';
import { checkKey, refOf } from './objects.js';

const FIELDS_NOT_IN_POLICY = new Set(['x-amz-signature', 'file', 'policy']);

const policyError = (m: string) => new S3Error('AccessDenied', 403, `Invalid according to Policy: ${m}`);

/**
 * PostObject: a browser form upload, authorised by a signed policy document instead of a
 * signed request. Every condition of the policy is checked against the form; the file is
 * streamed and its length checked against `content-length-range`.
 */
export async function postObject(call: S3Call): Promise<void> {
  const bucketName = call.bucketName!;
  const bucket = await call.env.cache.findBucket(bucketName);
  if (!bucket) throw s3Errors.noSuchBucket(bucketName);
  call.continueIfExpected();
  const { fields, file } = await readPostForm(call.req, call.header('content-type') ?? '');
  if (!file)
    throw s3Errors.invalidArgument('POST requires exactly one file upload per request.', 'file', '0');
  let key = fields.get('key');
  if (!key) throw s3Errors.invalidArgument('Bucket POST must contain a field named key.', 'key', '');
  key = key.replace(/\$\{filename\}/g, file.filename);
  checkKey(key);
  let range: [number, number] | null = null;
  const policyText = fields.get('policy');
  if (policyText !== undefined) {
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
    let policy: { expiration?: string; conditions?: unknown[] };
    try {
      policy = JSON.parse(Buffer.from(policyText, 'base64').toString('utf8'));
    } catch {
      throw s3Errors.invalidArgument('Invalid Policy: Invalid JSON.', 'policy');
    }
    const expires = Date.parse(policy.expiration ?? '');
    if (Number.isNaN(expires))
      throw s3Errors.invalidArgument('Invalid Policy: Policy missing expiration.', 'policy');
    if (expires < call.env.clock.nowMs()) throw policyError('Policy expired.');
    const signedAt = amzDateToMs(fields.get('x-amz-date') ?? '');
    if (signedAt === null) throw s3Errors.invalidArgument('x-amz-date is not valid.', 'x-amz-date');
    const values = new Map(fields);
    values.set('bucket', bucketName);
    values.set('key', key);
    const covered = new Set<string>(['bucket']);
    for (const c of policy.conditions ?? []) {
      if (Array.isArray(c)) {
        const [op, field, value] = c as [string, unknown, unknown];
        if (String(op).toLowerCase() === 'content-length-range') {
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
        for (const [field, value] of Object.entries(c as Record<string, unknown>)) {
          const name = field.toLowerCase();
          covered.add(name);
          if ((values.get(name) ?? '') !== String(value))
            throw policyError(`Policy Condition failed: ["eq", "$${name}", "${value}"]`);
        }
      }
    }
    for (const name of fields.keys()) {
      if (!FIELDS_NOT_IN_POLICY.has(name) && !name.startsWith('x-ignore-') && !covered.has(name)) {
        throw policyError(`Extra input fields: ${name}`);
      }
    }
    call.principal = {
      kind: 'key',
      key: found,
      credential: {
        kind: 'query',
        accessKeyId,
        date,
        region,
        service,
        signedHeaders: [],
        signature: '',
        amzDate: fields.get('x-amz-date')!,
        expiresSeconds: null,
        payloadHash: 'UNSIGNED-PAYLOAD',
      },
    };
  }
  call.authorize(bucket, 's3:PutObject', key);
  const metadata: Record<string, string> = {};
  const headers: Record<string, string> = {};
  for (const [name, value] of fields) {
    if (name.startsWith('x-amz-meta-')) metadata[name.slice('x-amz-meta-'.length)] = value;
    if (['cache-control', 'content-disposition', 'content-encoding', 'expires'].includes(name))
      headers[name] = value;
  }
  const attrs: ObjectAttributes = {
    contentType: fields.get('content-type') ?? file.contentType ?? null,
    headers,
    metadata,
    tags: fields.get('tagging') ? tagsFromXml(fields.get('tagging')!) : {},
  };
  const md5 = createHash('md5');
  let size = 0;
  const limit = range ?? [0, call.env.settings.maxObjectBytes];
  const body = {
    expectedSize: -1,
    async *chunks() {
      for await (const c of file.data) {
        size += c.length;
        if (size > limit[1])
          throw new S3Error('EntityTooLarge', 400, 'Your proposed upload exceeds the maximum allowed size', {
            MaxSizeAllowed: String(limit[1]),
          });
        md5.update(c);
        yield c;
      }
    },
    verify() {
      if (size < limit[0])
        throw new S3Error(
          'EntityTooSmall',
          400,
          'Your proposed upload is smaller than the minimum allowed size',
          { MinSizeAllowed: String(limit[0]) },
        );
      return { size, md5: md5.digest('hex'), checksum: null };
    },
  };
  // Form fields ask for sealing as headers do; what the form cannot carry here is refused, not ignored.
  for (const name of fields.keys())
    if (name.startsWith('x-amz-server-side-encryption-customer-') || name.startsWith('x-amz-object-lock-'))
      throw s3Errors.notImplemented(`The form field ${name} is not supported on POST uploads; use PUT.`);
  const { sealing } = sealingFor(call, bucket, (n) => fields.get(n));
  const lock = lockForWrite(call, bucket);
  const canned = fields.get('acl');
  const grants = canned !== undefined ? cannedGrants(canned.trim()) : [];
  checkGrants(call, bucket, grants);
  const acl = grants.length ? JSON.stringify(grants) : null;
  const done = await call.env.objects.putObject(refOf(bucket), key, body, attrs, { sealing, lock, acl });
  const location = call.objectUrl(bucketName, key);
  const out: Record<string, string> = { etag: quoteEtag(done.etag), location };
  if (done.versionId !== 'null') out['x-amz-version-id'] = done.versionId;
  if (sealing) out['x-amz-server-side-encryption'] = 'AES256';
  const redirect = fields.get('success_action_redirect') ?? fields.get('redirect');
  if (redirect) {
    const target = new URL(redirect);
    target.searchParams.set('bucket', bucketName);
    target.searchParams.set('key', key);
    target.searchParams.set('etag', quoteEtag(done.etag));
    return call.send(303, { ...out, location: target.toString() });
  }
  const status = fields.get('success_action_status');
  if (status === '201') {
    return call.xml(
      201,
      'PostResponse',
      el('Location', location) + el('Bucket', bucketName) + el('Key', key) + el('ETag', quoteEtag(done.etag)),
      out,
    );
  }
  call.send(status === '200' ? 200 : 204, out);
}

function tagsFromXml(xml: string): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const m of xml.matchAll(/<Tag>\s*<Key>([^<]*)<\/Key>\s*<Value>([^<]*)<\/Value>\s*<\/Tag>/g))
    tags[m[1]!] = m[2]!;
  return Object.keys(tags).length ? tags : parseTagQuery('');
}
