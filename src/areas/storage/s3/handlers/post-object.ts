import { createHash } from 'node:crypto';
import type { ObjectAttributes } from '../../objects/object-store.js';
import { storageClassOf } from '../../objects/storage-class.js';
import type { S3Call } from '../context.js';
import { sealingFor } from '../encryption.js';
import { S3Error, s3Errors } from '../errors.js';
import { readPostForm } from '../form-data.js';
import { lockForWrite } from '../object-lock.js';
import { authenticatePostForm } from '../post-policy.js';
import { doc, el } from '../xml.js';
import { aclForWrite } from './access.js';
import { parseTagQuery, quoteEtag } from './object-headers.js';
import { checkKey, refOf } from './object-lookup.js';

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
  const signed = await authenticatePostForm(call, fields, bucketName, key);
  if (signed) call.principal = signed.principal;
  const range = signed?.range ?? null;
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
  const { sealing } = await sealingFor(call, bucket, (n) => fields.get(n));
  const lock = lockForWrite(call, bucket);
  const acl = await aclForWrite(call, bucket, key, fields.get('acl') ?? 'private');
  const storageClass = storageClassOf(fields.get('x-amz-storage-class'));
  const done = await call.env.objects.putObject(refOf(bucket), key, body, attrs, {
    sealing,
    lock,
    acl,
    storageClass,
  });
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
    // AWS's documented PostResponse carries no XML namespace; clients look `Key` up without one.
    const inner =
      el('Location', location) + el('Bucket', bucketName) + el('Key', key) + el('ETag', quoteEtag(done.etag));
    return call.send(201, { 'content-type': 'application/xml', ...out }, doc('PostResponse', inner, false));
  }
  call.send(status === '200' ? 200 : 204, out);
}

function tagsFromXml(xml: string): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const m of xml.matchAll(/<Tag>\s*<Key>([^<]*)<\/Key>\s*<Value>([^<]*)<\/Value>\s*<\/Tag>/g))
    tags[m[1]!] = m[2]!;
  return Object.keys(tags).length ? tags : parseTagQuery('');
}
