import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';

/** PNG (RGB, 8 bits) from raw rows: the reference renderer's only image format. */
export function encodePng(
  width: number,
  height: number,
  pixel: (x: number, y: number) => [number, number, number],
): Buffer {
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    raw[row] = 0; // filter: none
    for (let x = 0; x < width; x++) {
      const [r, g, b] = pixel(x, y);
      raw[row + 1 + x * 3] = r;
      raw[row + 2 + x * 3] = g;
      raw[row + 3 + x * 3] = b;
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

const TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const byte of buf) c = TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Width and height (longest side 512) of an aspect ratio like `16:9`. */
export function sizeOf(aspect: string): { width: number; height: number } {
  const [w, h] = aspect.split(':').map(Number) as [number, number];
  return w >= h
    ? { width: 512, height: Math.round((512 * h) / w) }
    : { width: Math.round((512 * w) / h), height: 512 };
}

/** The reference renderer's picture: bands whose colours come from the prompt and seed. Same input, same bytes. */
export function referenceImage(prompt: string, seed: number, aspect: string): Buffer {
  const digest = createHash('sha256').update(`${seed}:${prompt}`).digest();
  const { width, height } = sizeOf(aspect);
  const bands = 8;
  return encodePng(width, height, (x, y) => {
    const band = Math.floor(((x + y) / (width + height)) * bands) % bands;
    return [digest[band * 3]!, digest[band * 3 + 1]!, digest[band * 3 + 2]!];
  });
}
