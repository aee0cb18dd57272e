import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readPostForm } from './form-data.js';

const CT = 'multipart/form-data; boundary=XyZ';
const part = (name: string, value: string, filename?: string, type?: string) =>
  `--XyZ\r\nContent-Disposition: form-data; name="${name}"${filename !== undefined ? `; filename="${filename}"` : ''}\r\n` +
  `${type ? `Content-Type: ${type}\r\n` : ''}\r\n${value}\r\n`;
const stream = (...chunks: string[]) => Readable.from(chunks.map((c) => Buffer.from(c)));
const all = async (data: AsyncIterable<Buffer>) => {
  const out: Buffer[] = [];
  for await (const c of data) out.push(c);
  return Buffer.concat(out).toString();
};

describe('the POST upload form', () => {
  it('gives the fields, lower-cased, and streams the file; parts after it are ignored', async () => {
    const body =
      part('Key', 'uploads/$' + '{filename}') +
      part('X-Amz-Meta-Colour', 'blå') +
      part('file', 'hello\r\n--Xy not a boundary', 'dir/hé.txt', 'text/plain') +
      part('after', 'ignored') +
      '--XyZ--\r\n';
    // Split in small chunks so a boundary falls across them.
    const chunks = body.match(/[\s\S]{1,7}/g)!;
    const { fields, file } = await readPostForm(stream(...chunks), CT);
    expect(Object.fromEntries(fields)).toEqual({
      key: 'uploads/$' + '{filename}',
      'x-amz-meta-colour': 'blå',
    });
    expect(file).toMatchObject({ filename: 'dir/hé.txt', contentType: 'text/plain' });
    expect(await all(file!.data)).toBe('hello\r\n--Xy not a boundary');
    expect(fields.has('after')).toBe(false);
  });

  it('answers without a file when the form has none', async () => {
    const { fields, file } = await readPostForm(stream(part('key', 'k'), '--XyZ--\r\n'), CT);
    expect(file).toBeNull();
    expect(fields.get('key')).toBe('k');
  });

  it('refuses a form without a boundary, one that ends early, and a file cut short', async () => {
    await expect(readPostForm(stream(part('key', 'k')), 'multipart/form-data')).rejects.toMatchObject({
      code: 'InvalidRequest',
    });
    await expect(readPostForm(stream('--XyZ\r\nContent-Disposition: form-d'), CT)).rejects.toMatchObject({
      code: 'InvalidRequest',
    });
    const cut = await readPostForm(
      stream(
        part('key', 'k'),
        '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc',
      ),
      CT,
    );
    await expect(all(cut.file!.data)).rejects.toMatchObject({ code: 'IncompleteBody' });
  });

  it('refuses fields over 64 KiB together', async () => {
    const big = part('a', 'x'.repeat(40_000)) + part('b', 'y'.repeat(40_000)) + '--XyZ--\r\n';
    await expect(readPostForm(stream(big), CT)).rejects.toMatchObject({ code: 'InvalidRequest' });
  });
});
