import { Readable } from 'node:stream';
import { gpuErrors } from './errors.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * The uploaded body, passed through while it keeps its word: exactly `size` bytes (a longer or
 * shorter body fails the stream, so nothing is committed) and, when `maxSide` is given and the
 * file is a PNG, neither side of the image longer than that (read from its header).
 */
export function boundedUpload(body: Readable, size: number, maxSide: number | null): Readable {
  async function* checked() {
    let seen = 0;
    let head = Buffer.alloc(0);
    for await (const chunk of body as AsyncIterable<Buffer>) {
      seen += chunk.length;
      if (seen > size) throw gpuErrors.uploadSize(size);
      if (maxSide !== null && head.length < 24) {
        head = Buffer.concat([head, chunk.subarray(0, 24 - head.length)]);
        if (head.length >= 24 && head.subarray(0, 8).equals(PNG_SIGNATURE)) {
          const width = head.readUInt32BE(16);
          const height = head.readUInt32BE(20);
          if (width > maxSide || height > maxSide) throw gpuErrors.imageTooLarge(width, height, maxSide);
        }
      }
      yield chunk;
    }
    if (seen !== size) throw gpuErrors.uploadSize(size);
  }
  return Readable.from(checked());
}
