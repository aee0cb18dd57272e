import type { paths } from '../../../sdk/index.js';
import { problemOf } from '../api.js';
import { needsMultipart, partsOf } from './upload-parts.js';

/**
 * The upload routes, named through the SDK's path type: a changed contract breaks this file's
 * type-check. Uploads use XMLHttpRequest, the one browser API that reports an upload's progress
 * (fetch does not), with the session's CSRF header like every SDK call.
 */
const OBJECT_PATH: keyof paths = '/v1/storage/buckets/{bucket_name}/object';
const UPLOADS_PATH: keyof paths = '/v1/storage/buckets/{bucket_name}/uploads';
const UPLOAD_PATH: keyof paths = '/v1/storage/buckets/{bucket_name}/uploads/{upload_id}';
/** Parts in flight at once: a fast line stays busy, a slow one is not split too thin. */
const PARTS_AT_ONCE = 3;

type Progress = (sent: number) => void;

/** One request by XMLHttpRequest; resolves with it once answered with a 2xx. */
function send(
  method: string,
  url: string,
  body: Blob | string | null,
  csrf: string,
  headers: Record<string, string>,
  onProgress: Progress = () => {},
): Promise<XMLHttpRequest> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    xhr.setRequestHeader('x-fjord-csrf', csrf);
    for (const [k, v] of Object.entries(headers)) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => onProgress(e.loaded);
    xhr.onload = () => {
      if (xhr.status < 300) return resolve(xhr);
      let answer: unknown = null;
      try {
        answer = JSON.parse(xhr.responseText);
      } catch {
        /* not JSON */
      }
      reject(problemOf(answer, xhr.status));
    };
    xhr.onerror = () => reject(problemOf('The upload was interrupted.', 0));
    xhr.send(body);
  });
}

const at = (path: string, bucket: string, uploadId = '') =>
  path
    .replace('{bucket_name}', encodeURIComponent(bucket))
    .replace('{upload_id}', encodeURIComponent(uploadId));

/**
 * Uploads a file as the object `key`: in one PUT up to 5 GiB, above that as a multipart upload
 * (parts of `partSize`, a few at a time, aborted if one fails), reporting the bytes sent so far.
 */
export async function uploadObject(
  bucket: string,
  key: string,
  file: File,
  csrf: string,
  onProgress: Progress,
) {
  const type = { 'content-type': file.type || 'application/octet-stream' };
  const k = `key=${encodeURIComponent(key)}`;
  if (!needsMultipart(file.size)) {
    await send('PUT', `${at(OBJECT_PATH, bucket)}?${k}`, file, csrf, type, onProgress);
    return;
  }
  const started = await send('POST', `${at(UPLOADS_PATH, bucket)}?${k}`, null, csrf, type);
  // S3's InitiateMultipartUploadResult: the element's local name, whatever its namespace.
  const answer = new DOMParser().parseFromString(started.responseText, 'application/xml');
  const uploadId = answer.getElementsByTagNameNS('*', 'UploadId')[0]?.textContent ?? '';
  if (!uploadId) throw problemOf('The storage did not start the upload.', 502);
  const url = at(UPLOAD_PATH, bucket, uploadId);
  const parts = partsOf(file.size);
  const sent = new Array<number>(parts.length).fill(0);
  const etags = new Array<string>(parts.length);
  let next = 0;
  const worker = async () => {
    while (next < parts.length) {
      const i = next++;
      const p = parts[i]!;
      const xhr = await send(
        'PUT',
        `${url}?${k}&part_number=${p.number}`,
        file.slice(p.start, p.end),
        csrf,
        {},
        (n) => {
          sent[i] = n;
          onProgress(sent.reduce((a, b) => a + b, 0));
        },
      );
      sent[i] = p.end - p.start;
      etags[i] = xhr.getResponseHeader('etag') ?? '';
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(PARTS_AT_ONCE, parts.length) }, worker));
    const xml = `<CompleteMultipartUpload>${parts
      .map((p, i) => `<Part><PartNumber>${p.number}</PartNumber><ETag>${escapeXml(etags[i]!)}</ETag></Part>`)
      .join('')}</CompleteMultipartUpload>`;
    await send('POST', `${url}?${k}`, xml, csrf, { 'content-type': 'application/xml' });
  } catch (err) {
    // The parts sent so far would count against the bucket until its lifecycle cleans them up.
    await send('DELETE', `${url}?${k}`, null, csrf, {}).catch(() => {});
    throw err;
  }
}

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
