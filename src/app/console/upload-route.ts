import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { UPLOAD_GRANT_PREFIX } from '../../areas/storage/s3/internal-upload.js';
import type { CustomerAccess } from '../../kernel/auth/principal.js';
import { AppError, kernelErrors } from '../../kernel/errors.js';
import { defineRoute } from '../../kernel/http/route.js';

const TAG = 'Console';
const access: CustomerAccess = { kind: 'customer', scopes: ['transcript:write'] };

/**
 * The console's way to a presigned upload address. Presigned uploads go to the S3 data plane,
 * another origin than the console's: the page's Content-Security-Policy (`connect-src 'self'`)
 * keeps it from calling anything but its own origin, so the page PUTs the file here (with upload
 * progress, same origin) and Fjord passes the body on, streamed, to the address. Only Fjord's own
 * S3 endpoint, and only an address carrying an internal upload grant, is accepted: this is not a
 * way to send requests anywhere else.
 */
export function consoleUploadRoute(s3Endpoint: () => string | null) {
  return defineRoute({
    method: 'PUT',
    url: '/console/upload',
    operationId: 'consoleUpload',
    tag: TAG,
    summary: 'Console: PUT a file to one of Fjord’s presigned upload addresses, from the same origin',
    description:
      'The body is passed on unread to `to`, a presigned upload address this Fjord gave (a speech job’s `upload_url`). Answers the data plane’s status.',
    access,
    rawBody: true,
    idempotency: false,
    query: Type.Object({
      to: Type.String({ maxLength: 8192, description: 'The presigned address, as the API gave it' }),
    }),
    response: {
      200: Type.Object({ status: Type.Integer(), etag: Type.Union([Type.String(), Type.Null()]) }),
    },
    errors: [422, 502],
    handler: async ({ query, raw }) => {
      const endpoint = s3Endpoint();
      let to: URL;
      try {
        to = new URL(query.to);
      } catch {
        throw kernelErrors.invalid('`to` is not an address.');
      }
      if (
        !endpoint ||
        to.origin !== new URL(endpoint).origin ||
        !(to.searchParams.get('X-Amz-Credential') ?? '').startsWith(UPLOAD_GRANT_PREFIX)
      )
        throw kernelErrors.invalid('`to` is not one of this Fjord’s presigned upload addresses.');
      const length = raw.headers['content-length'];
      const headers: Record<string, string> = {};
      if (length !== undefined) headers['content-length'] = length;
      if (raw.headers['content-type']) headers['content-type'] = raw.headers['content-type'];
      let answer: Response;
      try {
        answer = await fetch(to, {
          method: 'PUT',
          headers,
          body: Readable.toWeb(raw.raw) as ReadableStream,
          duplex: 'half',
        } as RequestInit);
      } catch {
        throw new AppError('bad_gateway', 'upload_failed', 'The object storage could not be reached.');
      }
      await answer.body?.cancel();
      if (answer.status >= 400)
        throw kernelErrors.invalid(`The object storage refused the upload (${answer.status}).`);
      return { status: answer.status, etag: answer.headers.get('etag') };
    },
  });
}
