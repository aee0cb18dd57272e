import { createHash, type Hash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { s3Errors } from './errors.js';
import { createXxhash, xxhashLoaded, xxhashReady } from './xxhash.js';

/**
 * The flexible checksums of S3 (`x-amz-checksum-*`), computed incrementally so a streamed body
 * is checked without being held. CRC32 comes from zlib and the digests from node:crypto; CRC32C
 * and CRC64NVME have no small, well-kept package, so they are table-driven here (both reflected,
 * like zlib's CRC32); the xxHash family is hash-wasm's WebAssembly (xxhash.ts).
 */
export type ChecksumAlgorithm =
  | 'CRC32'
  | 'CRC32C'
  | 'CRC64NVME'
  | 'MD5'
  | 'SHA1'
  | 'SHA256'
  | 'SHA512'
  | 'XXHASH3'
  | 'XXHASH64'
  | 'XXHASH128';
export const CHECKSUM_ALGORITHMS: readonly ChecksumAlgorithm[] = [
  'CRC32',
  'CRC32C',
  'CRC64NVME',
  'MD5',
  'SHA1',
  'SHA256',
  'SHA512',
  'XXHASH3',
  'XXHASH64',
  'XXHASH128',
];

export interface Checksum {
  update(chunk: Buffer): void;
  /** Base64 of the big-endian digest, as S3 sends it in headers and trailers. */
  digest(): string;
}

const crc32cTable = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

const crc64Table = (() => {
  const poly = 0x9a6c9329ac4bc9b5n; // CRC-64/NVME, reflected
  const table = new BigUint64Array(256);
  for (let n = 0; n < 256; n++) {
    let c = BigInt(n);
    for (let k = 0; k < 8; k++) c = c & 1n ? poly ^ (c >> 1n) : c >> 1n;
    table[n] = c;
  }
  return table;
})();

/** CRC-64/NVME split into two 32-bit halves: BigInt per byte would be far too slow for large bodies. */
const crc64Lo = new Uint32Array(256);
const crc64Hi = new Uint32Array(256);
for (let n = 0; n < 256; n++) {
  crc64Lo[n] = Number(crc64Table[n]! & 0xffffffffn);
  crc64Hi[n] = Number(crc64Table[n]! >> 32n);
}

class Crc32 implements Checksum {
  private value = 0;
  update(chunk: Buffer): void {
    this.value = crc32(chunk, this.value);
  }
  digest(): string {
    const out = Buffer.alloc(4);
    out.writeUInt32BE(this.value >>> 0);
    return out.toString('base64');
  }
}

class Crc32c implements Checksum {
  private value = 0xffffffff;
  update(chunk: Buffer): void {
    let c = this.value;
    for (let i = 0; i < chunk.length; i++) c = crc32cTable[(c ^ chunk[i]!) & 0xff]! ^ (c >>> 8);
    this.value = c;
  }
  digest(): string {
    const out = Buffer.alloc(4);
    out.writeUInt32BE((this.value ^ 0xffffffff) >>> 0);
    return out.toString('base64');
  }
}

class Crc64Nvme implements Checksum {
  private lo = 0xffffffff;
  private hi = 0xffffffff;
  update(chunk: Buffer): void {
    let lo = this.lo;
    let hi = this.hi;
    for (let i = 0; i < chunk.length; i++) {
      const idx = (lo ^ chunk[i]!) & 0xff;
      // (crc >> 8) across the two halves, then xor the table entry
      const nlo = ((lo >>> 8) | (hi << 24)) >>> 0;
      const nhi = hi >>> 8;
      lo = (nlo ^ crc64Lo[idx]!) >>> 0;
      hi = (nhi ^ crc64Hi[idx]!) >>> 0;
    }
    this.lo = lo;
    this.hi = hi;
  }
  digest(): string {
    const out = Buffer.alloc(8);
    out.writeUInt32BE((this.hi ^ 0xffffffff) >>> 0, 0);
    out.writeUInt32BE((this.lo ^ 0xffffffff) >>> 0, 4);
    return out.toString('base64');
  }
}

class HashChecksum implements Checksum {
  private readonly hash: Hash;
  constructor(algorithm: string) {
    this.hash = createHash(algorithm);
  }
  update(chunk: Buffer): void {
    this.hash.update(chunk);
  }
  digest(): string {
    return this.hash.digest('base64');
  }
}

/**
 * A new running checksum. The xxHash algorithms need `checksumReady` to have settled first (their
 * WebAssembly is compiled on first use, not at every start).
 */
export function createChecksum(algorithm: ChecksumAlgorithm): Checksum {
  switch (algorithm) {
    case 'CRC32':
      return new Crc32();
    case 'CRC32C':
      return new Crc32c();
    case 'CRC64NVME':
      return new Crc64Nvme();
    case 'SHA1':
      return new HashChecksum('sha1');
    case 'SHA256':
      return new HashChecksum('sha256');
    case 'MD5':
      return new HashChecksum('md5');
    case 'SHA512':
      return new HashChecksum('sha512');
    case 'XXHASH3':
    case 'XXHASH64':
    case 'XXHASH128':
      return createXxhash(algorithm);
  }
}

/** What `createChecksum(algorithm)` waits for, or null when it can run now (the usual case). */
export function checksumReady(algorithm: ChecksumAlgorithm): Promise<void> | null {
  return algorithm.startsWith('XXHASH') ? xxhashReady() : null;
}

/** Whether `createChecksum(algorithm)` can run now, without starting anything. */
export const checksumLoaded = (algorithm: ChecksumAlgorithm): boolean =>
  !algorithm.startsWith('XXHASH') || xxhashLoaded();

/** `x-amz-checksum-crc32` → CRC32, or null when the header names no known algorithm. */
export function algorithmOfHeader(header: string): ChecksumAlgorithm | null {
  // Called for every header of a PUT: most start otherwise.
  if (header.length < 16 || (header[0] !== 'x' && header[0] !== 'X')) return null;
  const m = /^x-amz-checksum-([a-z0-9]+)$/i.exec(header);
  if (!m) return null;
  const name = m[1]!.toUpperCase();
  return (CHECKSUM_ALGORITHMS as readonly string[]).includes(name) ? (name as ChecksumAlgorithm) : null;
}

/** The value of `x-amz-checksum-algorithm` as an algorithm; S3's InvalidRequest for one it does not offer. */
export function requestedAlgorithm(value: string): ChecksumAlgorithm {
  const algorithm = value.toUpperCase() as ChecksumAlgorithm;
  if (!CHECKSUM_ALGORITHMS.includes(algorithm))
    throw s3Errors.invalidRequest(
      `Checksum algorithm provided is unsupported. Please try again with any of the valid types: [${CHECKSUM_ALGORITHMS.join(', ')}]`,
    );
  return algorithm;
}
