import { describe, expect, it } from 'vitest';
import { checksumReady, createChecksum } from './checksums.js';

const hex = (b64: string) => Buffer.from(b64, 'base64').toString('hex');

describe('checksums', () => {
  // The standard check value of each CRC over "123456789".
  it('match the published check values', () => {
    const input = Buffer.from('123456789');
    const value = (alg: Parameters<typeof createChecksum>[0]) => {
      const c = createChecksum(alg);
      c.update(input.subarray(0, 4));
      c.update(input.subarray(4));
      return hex(c.digest());
    };
    expect(value('CRC32')).toBe('cbf43926');
    expect(value('CRC32C')).toBe('e3069283');
    expect(value('CRC64NVME')).toBe('ae8b14860a799888');
    expect(value('SHA256')).toBe('15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225');
  });
  it('give the empty-input values', () => {
    expect(hex(createChecksum('CRC32').digest())).toBe('00000000');
    expect(hex(createChecksum('CRC64NVME').digest())).toBe('0000000000000000');
  });
  // xxHash's published values for "hello" (seed 0), in canonical (big-endian) byte order. The first
  // assertion needs the WebAssembly not yet loaded in this process (fjord-test: isolate).
  it('give xxHash values once its WebAssembly has loaded', async () => {
    expect(() => createChecksum('XXHASH64')).toThrow(/not loaded/);
    await checksumReady('XXHASH64');
    expect(checksumReady('XXHASH3')).toBeNull();
    const value = (alg: 'XXHASH64' | 'XXHASH3' | 'XXHASH128') => {
      const a = createChecksum(alg);
      const b = createChecksum(alg); // a second body at the same time keeps its own state
      a.update(Buffer.from('he'));
      b.update(Buffer.from('other bytes'));
      a.update(Buffer.from('llo'));
      return hex(a.digest());
    };
    expect(value('XXHASH64')).toBe('26c7827d889f6da3');
    expect(value('XXHASH3')).toBe('9555e8555c62dcfd');
    expect(value('XXHASH128')).toBe('b5e9c1ad071b3e7fc779cfaa5e523818');
  });
  it('give MD5 and SHA-512 as node:crypto does', () => {
    expect(hex(createChecksum('MD5').digest())).toBe('d41d8cd98f00b204e9800998ecf8427e');
    const c = createChecksum('SHA512');
    c.update(Buffer.from('abc'));
    expect(hex(c.digest()).slice(0, 16)).toBe('ddaf35a193617aba');
  });
});
