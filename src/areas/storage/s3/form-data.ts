import { s3Errors } from './errors.js';

export interface FormFile {
  filename: string;
  contentType: string | null;
  /** The file's bytes, streamed; must be read to the end. */
  data: AsyncGenerator<Buffer>;
}

const MAX_FIELDS_BYTES = 64 * 1024;

/**
 * A streaming multipart/form-data reader for S3 POST uploads: fields are small and come first,
 * the `file` field comes last (S3 ignores anything after it) and is streamed, never held.
 */
export async function readPostForm(
  source: AsyncIterable<Buffer>,
  contentType: string,
): Promise<{ fields: Map<string, string>; file: FormFile | null }> {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!m) throw s3Errors.invalidRequest('The multipart form has no boundary.');
  const boundary = Buffer.from(`\r\n--${(m[1] ?? m[2])!.trim()}`);
  const iterator = source[Symbol.asyncIterator]();
  // Starting with CRLF lets the first boundary be matched like every other one.
  let buf = Buffer.from('\r\n');
  let ended = false;
  const more = async (): Promise<boolean> => {
    if (ended) return false;
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      return false;
    }
    buf = Buffer.concat([buf, next.value]);
    if (buf.length > MAX_FIELDS_BYTES * 2 && !inFile)
      throw s3Errors.invalidRequest('The form fields are too large.');
    return true;
  };
  let inFile = false;
  const fields = new Map<string, string>();

  // Skip the preamble up to the first boundary.
  for (;;) {
    const at = buf.indexOf(boundary);
    if (at >= 0) {
      buf = buf.subarray(at + boundary.length);
      break;
    }
    if (!(await more())) throw s3Errors.malformedXml();
  }
  for (;;) {
    // After a boundary: "--" ends the form, CRLF starts a part.
    while (buf.length < 2) if (!(await more())) throw s3Errors.invalidRequest('The form ended early.');
    if (buf[0] === 45 && buf[1] === 45) return { fields, file: null };
    let headerEnd = buf.indexOf('\r\n\r\n');
    while (headerEnd < 0) {
      if (!(await more())) throw s3Errors.invalidRequest('The form ended early.');
      headerEnd = buf.indexOf('\r\n\r\n');
    }
    const headerText = buf.subarray(2, headerEnd).toString('utf8');
    buf = buf.subarray(headerEnd + 4);
    const disposition = /content-disposition:([^\r\n]*)/i.exec(headerText)?.[1] ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
    const partType = /content-type:\s*([^\r\n]*)/i.exec(headerText)?.[1]?.trim() ?? null;
    if (name === undefined) throw s3Errors.invalidRequest('A form part has no name.');
    if (name.toLowerCase() === 'file') {
      inFile = true;
      const data = (async function* () {
        for (;;) {
          const at = buf.indexOf(boundary);
          if (at >= 0) {
            if (at > 0) yield buf.subarray(0, at);
            buf = buf.subarray(at + boundary.length);
            // The rest of the form (after the file) is read and ignored.
            while (await more()) buf = Buffer.alloc(0);
            return;
          }
          // Keep a tail that could be the start of the boundary.
          const keep = boundary.length - 1;
          if (buf.length > keep) {
            yield buf.subarray(0, buf.length - keep);
            buf = buf.subarray(buf.length - keep);
          }
          if (!(await more())) throw s3Errors.incompleteBody();
        }
      })();
      return { fields, file: { filename: filename ?? '', contentType: partType, data } };
    }
    let at = buf.indexOf(boundary);
    while (at < 0) {
      if (!(await more())) throw s3Errors.invalidRequest('The form ended early.');
      at = buf.indexOf(boundary);
    }
    fields.set(name.toLowerCase(), buf.subarray(0, at).toString('utf8'));
    buf = buf.subarray(at + boundary.length);
  }
}
