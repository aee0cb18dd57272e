import type { IHasher } from 'hash-wasm';
import type { Checksum } from './checksums.js';

/**
 * S3's xxHash checksums (XXHASH64, and XXH3 in its 64- and 128-bit forms), from hash-wasm. Its
 * hashers are WebAssembly instances made asynchronously, about 60 ms for the three, so they are
 * made once, on the first request that names one, rather than at every start. One instance per
 * algorithm serves every body at once: each checksum keeps its own state and loads it around each
 * update (hash-wasm's save and load), which cannot interleave because an update is synchronous.
 */
type XxhashAlgorithm = 'XXHASH3' | 'XXHASH64' | 'XXHASH128';

let hashers: Record<XxhashAlgorithm, IHasher> | null = null;
let loading: Promise<void> | null = null;

export const xxhashLoaded = (): boolean => hashers !== null;

/** Null once the hashers are there; else the promise of them. */
export function xxhashReady(): Promise<void> | null {
  if (hashers) return null;
  loading ??= (async () => {
    const { createXXHash3, createXXHash64, createXXHash128 } = await import('hash-wasm');
    const [h3, h64, h128] = await Promise.all([createXXHash3(), createXXHash64(), createXXHash128()]);
    hashers = { XXHASH3: h3, XXHASH64: h64, XXHASH128: h128 };
  })().catch((err) => {
    loading = null; // a later request tries again
    throw err;
  });
  return loading;
}

class XxhashChecksum implements Checksum {
  private state: Uint8Array;
  constructor(private readonly hasher: IHasher) {
    hasher.init();
    this.state = hasher.save();
  }
  update(chunk: Buffer): void {
    this.hasher.load(this.state).update(chunk);
    this.state = this.hasher.save();
  }
  /** Base64 of the canonical (big-endian) digest, as S3 sends it. */
  digest(): string {
    return Buffer.from(this.hasher.load(this.state).digest('binary')).toString('base64');
  }
}

export function createXxhash(algorithm: XxhashAlgorithm): Checksum {
  if (!hashers) throw new Error(`${algorithm} is not loaded yet: await checksumReady() first`);
  return new XxhashChecksum(hashers[algorithm]);
}
