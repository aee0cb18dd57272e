import { describe, expect, it } from 'vitest';
import { createChecksum } from './checksums.js';

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
});
