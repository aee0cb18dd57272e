import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { type S3Error, s3Errors } from './errors.js';

export interface FormFile {
  filename: string;
  contentType: string | null;
  /** The file's bytes, streamed; must be read to the end. */
  data: AsyncGenerator<Buffer>;
}

/** The form's fields together (every part but the file): S3 bounds them, not the file. */
const MAX_FIELDS_BYTES = 64 * 1024;

/**
 * The S3 POST upload form, parsed by busboy: the fields come first and are small, the part named
 * `file` comes last (S3 ignores anything after it) and is streamed, never held.
 */
export function readPostForm(
  source: Readable,
  contentType: string,
): Promise<{ fields: Map<string, string>; file: FormFile | null }> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      // Filenames as the browser sent them (`${filename}` in a key is replaced by it), UTF-8.
      preservePath: true,
      defParamCharset: 'utf8',
      limits: { fieldSize: MAX_FIELDS_BYTES + 1 },
    });
  } catch {
    return Promise.reject(s3Errors.invalidRequest('The multipart form has no boundary.'));
  }
  const fields = new Map<string, string>();
  let fieldsBytes = 0;
  let settled = false;
  // The form after the file: read to its end before the answer, its parts ignored.
  const ended = new Promise<void>((resolve) => {
    parser.once('close', resolve);
    parser.once('error', () => resolve());
  });

  return new Promise((resolve, reject) => {
    const fail = (err: S3Error) => {
      if (settled) return;
      settled = true;
      source.unpipe(parser);
      parser.destroy();
      reject(err);
    };
    const addField = (name: string, value: string) => {
      fieldsBytes += value.length;
      if (fieldsBytes > MAX_FIELDS_BYTES)
        return fail(s3Errors.invalidRequest('The form fields are too large.'));
      fields.set(name.toLowerCase(), value);
    };
    const takeFile = (filename: string, mimeType: string | null, data: AsyncGenerator<Buffer>) => {
      settled = true;
      resolve({ fields, file: { filename, contentType: mimeType, data } });
    };

    parser.on('field', (name, value, info) => {
      if (settled) return;
      if (info.valueTruncated) return fail(s3Errors.invalidRequest('The form fields are too large.'));
      // A file part sent without a filename arrives as a field: small enough to have been held.
      if (name.toLowerCase() === 'file') return takeFile('', null, once(Buffer.from(value, 'utf8'), ended));
      addField(name, value);
    });
    parser.on('file', (name, stream, info) => {
      // busboy may end a file stream with an error after its reader has stopped (the form cut
      // short): the reader sees the first one; a later one must not go unheard.
      stream.on('error', () => {});
      if (settled) return void stream.resume();
      if (name.toLowerCase() === 'file')
        return takeFile(info.filename ?? '', info.mimeType, fileData(stream, ended));
      // A part with a filename that is not `file` is still a field to S3.
      let text = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        text += chunk;
        if (fieldsBytes + text.length > MAX_FIELDS_BYTES)
          fail(s3Errors.invalidRequest('The form fields are too large.'));
      });
      stream.on('end', () => addField(name, text));
    });
    parser.on('error', (err) => {
      const message = err instanceof Error ? err.message : String(err);
      fail(
        /end of/i.test(message) ? s3Errors.invalidRequest('The form ended early.') : s3Errors.malformedXml(),
      );
    });
    parser.on('close', () => {
      if (settled) return;
      settled = true;
      resolve({ fields, file: null });
    });
    source.pipe(parser);
  });
}

async function* fileData(stream: Readable, ended: Promise<void>): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of stream) yield chunk as Buffer;
  } catch {
    // busboy ends the file with an error when the form stops inside it.
    throw s3Errors.incompleteBody();
  }
  await ended;
}

async function* once(data: Buffer, ended: Promise<void>): AsyncGenerator<Buffer> {
  if (data.length) yield data;
  await ended;
}
