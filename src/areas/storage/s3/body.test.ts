import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BodyReader } from './body.js';

/** A request body as the server sees it: a stream with the request's headers on it. */
function request(headers: Record<string, string>): PassThrough & IncomingMessage {
  return Object.assign(new PassThrough(), { headers }) as unknown as PassThrough & IncomingMessage;
}
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

describe('BodyReader.whole', () => {
  it('reads a small body in one piece, counted and hashed as chunks() would', async () => {
    const req = request({ 'content-length': '10' });
    const body = new BodyReader(req, null, null, 1 << 20);
    const whole = body.whole(1024)!;
    req.write(Buffer.from('hello '));
    req.end(Buffer.from('world'.slice(0, 4)));
    const chunks = await whole;
    expect(Buffer.concat(chunks).toString()).toBe('hello worl');
    expect(body.verify()).toMatchObject({ size: 10, md5: md5(Buffer.from('hello worl')) });
  });

  it('leaves large, undeclared and aws-chunked bodies to chunks()', () => {
    expect(new BodyReader(request({ 'content-length': '2048' }), null, null, 1 << 20).whole(1024)).toBeNull();
    expect(
      new BodyReader(request({ 'transfer-encoding': 'chunked' }), null, null, 1 << 20).whole(1024),
    ).toBeNull();
    const chunked = request({ 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': '4' });
    expect(new BodyReader(chunked, null, null, 1 << 20).whole(1024)).toBeNull();
  });

  it('reads a body marked aws-chunked without a decoded length as sent, unframed', async () => {
    const req = request({ 'content-length': '4', 'content-encoding': 'gzip, aws-chunked' });
    const body = new BodyReader(req, null, null, 1 << 20);
    const whole = body.whole(1024)!;
    req.end(Buffer.from('5\r\nh'));
    expect(Buffer.concat(await whole).toString()).toBe('5\r\nh');
    expect(body.verify()).toMatchObject({ size: 4 });
  });

  it('a body that ends short of its length fails the check, not the read', async () => {
    const req = request({ 'content-length': '10' });
    const body = new BodyReader(req, null, null, 1 << 20);
    const whole = body.whole(1024)!;
    req.end(Buffer.from('short'));
    await whole;
    expect(() => body.verify()).toThrow(expect.objectContaining({ code: 'IncompleteBody' }));
  });

  it('a client that goes away mid-body is reported as the stream iterator reports it', async () => {
    const req = request({ 'content-length': '10' });
    const body = new BodyReader(req, null, null, 1 << 20);
    const whole = body.whole(1024)!;
    req.write(Buffer.from('hel'));
    req.destroy();
    await expect(whole).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });

  it('checks a declared SHA-256 and Content-MD5 against what arrived', async () => {
    const bytes = Buffer.from('abc');
    const sha = createHash('sha256').update(bytes).digest('hex');
    const cred = { payloadHash: sha } as ConstructorParameters<typeof BodyReader>[1];
    const good = request({
      'content-length': '3',
      'content-md5': createHash('md5').update(bytes).digest('base64'),
    });
    const reader = new BodyReader(good, cred, null, 1 << 20);
    const whole = reader.whole(1024)!;
    good.end(bytes);
    await whole;
    expect(reader.verify().size).toBe(3);

    const bad = request({ 'content-length': '3' });
    const other = new BodyReader(bad, cred, null, 1 << 20);
    const read = other.whole(1024)!;
    bad.end(Buffer.from('abd'));
    await read;
    expect(() => other.verify()).toThrow(expect.objectContaining({ code: 'XAmzContentSHA256Mismatch' }));
  });
});
