import { describe, expect, it } from 'vitest';
import { decodeAwsChunked } from './chunked.js';
import { signingKey } from './sigv4.js';

// The worked example of AWS's "Signature Calculations for STREAMING-AWS4-HMAC-SHA256-PAYLOAD".
const key = signingKey('wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', '20130524', 'us-east-1', 's3');
const signing = {
  key,
  amzDate: '20130524T000000Z',
  scope: '20130524/us-east-1/s3/aws4_request',
  seedSignature: '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9',
};
const body = (sigs: string[]) =>
  Buffer.concat([
    Buffer.from(`10000;chunk-signature=${sigs[0]}\r\n`),
    Buffer.alloc(65536, 'a'),
    Buffer.from(`\r\n400;chunk-signature=${sigs[1]}\r\n`),
    Buffer.alloc(1024, 'a'),
    Buffer.from(`\r\n0;chunk-signature=${sigs[2]}\r\n\r\n`),
  ]);
const good = [
  'ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648',
  '0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497',
  'b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9',
];

async function decode(bytes: Buffer, opts: Parameters<typeof decodeAwsChunked>[1], pieces = 7) {
  const step = Math.ceil(bytes.length / pieces);
  const source = (async function* () {
    for (let i = 0; i < bytes.length; i += step) yield bytes.subarray(i, i + step);
  })();
  const out: Buffer[] = [];
  for await (const c of decodeAwsChunked(source, opts)) out.push(c);
  return Buffer.concat(out);
}

describe('aws-chunked decoding', () => {
  it('verifies every chunk signature of the AWS example and strips the framing', async () => {
    const out = await decode(body(good), { signing, onTrailer: () => {} });
    expect(out.length).toBe(66560);
    expect(out.every((b) => b === 0x61)).toBe(true);
  });

  it('refuses a body whose second chunk signature is wrong', async () => {
    const bad = [good[0]!, good[0]!, good[2]!];
    await expect(decode(body(bad), { signing, onTrailer: () => {} })).rejects.toMatchObject({
      code: 'SignatureDoesNotMatch',
    });
  });

  it('refuses a body cut short', async () => {
    const b = body(good);
    await expect(
      decode(b.subarray(0, b.length - 30), { signing, onTrailer: () => {} }),
    ).rejects.toMatchObject({ code: 'IncompleteBody' });
  });

  it('reads unsigned chunks and hands over the trailers', async () => {
    const trailers: [string, string][] = [];
    const bytes = Buffer.from('5\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n');
    const out = await decode(bytes, { signing: null, onTrailer: (n, v) => trailers.push([n, v]) }, 11);
    expect(out.toString()).toBe('hello world');
    expect(trailers).toEqual([['x-amz-checksum-crc32', 'DUoRhQ==']]);
  });
});
