import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type ChecksumAlgorithm, createChecksum } from './checksums.js';
import { joinPartChecksums, uploadChecksumType } from './multipart-checksums.js';

const sum = (algorithm: ChecksumAlgorithm, ...pieces: Buffer[]) => {
  const c = createChecksum(algorithm);
  for (const p of pieces) c.update(p);
  return c.digest();
};

// Three 5 MiB parts of 'A', 'B' and 'C', with the values AWS and Ceph give them (ceph/s3-tests).
const MiB5 = 5 * 1024 * 1024;
const parts = ['A', 'B', 'C'].map((ch) => Buffer.alloc(MiB5, ch));
const partsOf = (algorithm: ChecksumAlgorithm) =>
  parts.map((p) => ({ value: sum(algorithm, p), size: p.length }));

describe('multipart checksums', () => {
  it('combine CRCs into the CRC of the whole object, for any split', () => {
    for (const algorithm of ['CRC32', 'CRC32C', 'CRC64NVME'] as const) {
      const whole = randomBytes(3000);
      for (const cuts of [[0], [1], [1000, 1001], [7, 2999], [0, 0, 3000]]) {
        const pieces: Buffer[] = [];
        let at = 0;
        for (const cut of [...cuts, whole.length]) {
          pieces.push(whole.subarray(at, cut));
          at = cut;
        }
        const joined = joinPartChecksums(
          algorithm,
          'FULL_OBJECT',
          pieces.map((p) => ({ value: sum(algorithm, p), size: p.length })),
        );
        expect(joined, `${algorithm} cut at ${cuts}`).toBe(sum(algorithm, whole));
      }
    }
  });

  it('give the full-object values AWS gives', () => {
    expect(partsOf('CRC32').map((p) => p.value)).toEqual(['JRTCyQ==', 'QoZTGg==', 'YAgjqw==']);
    expect(joinPartChecksums('CRC32', 'FULL_OBJECT', partsOf('CRC32'))).toBe('WgDhBQ==');
    expect(joinPartChecksums('CRC32C', 'FULL_OBJECT', partsOf('CRC32C'))).toBe('xU+Krw==');
    expect(partsOf('CRC64NVME').map((p) => p.value)).toEqual([
      'L/E4WYn8v98=',
      'xW1l19VobYM=',
      'cK5MnNaWrW4=',
    ]);
    expect(joinPartChecksums('CRC64NVME', 'FULL_OBJECT', partsOf('CRC64NVME'))).toBe('i+6LR0y3eFo=');
  });

  it('give the composite values AWS gives', () => {
    expect(joinPartChecksums('SHA256', 'COMPOSITE', partsOf('SHA256'))).toBe(
      'uWBwpe1dxI4Vw8Gf0X9ynOdw/SS6VBzfWm9giiv1sf4=-3',
    );
    expect(joinPartChecksums('SHA1', 'COMPOSITE', partsOf('SHA1'))).toBe('sizjvY4eud3MrcHdZM3cQ/ol39o=-3');
    const one = [{ value: 'arcu6553sHVAiX4MjW0j7I7vD4w6R+Gz9Ok0Q9lTa+0=', size: 1024 }];
    expect(joinPartChecksums('SHA256', 'COMPOSITE', one)).toBe(
      'Ok6Cs5b96ux6+MWQkJO7UBT5sKPBeXBLwvj/hK89smg=-1',
    );
  });

  it('choose the type S3 chooses, and refuse the combinations S3 refuses', () => {
    expect(uploadChecksumType('CRC32', undefined)).toBe('COMPOSITE');
    expect(uploadChecksumType('CRC64NVME', undefined)).toBe('FULL_OBJECT');
    expect(uploadChecksumType('CRC32C', 'FULL_OBJECT')).toBe('FULL_OBJECT');
    expect(uploadChecksumType('SHA1', 'FULL_OBJECT')).toHaveProperty('refused');
    expect(uploadChecksumType('CRC64NVME', 'COMPOSITE')).toHaveProperty('refused');
    expect(uploadChecksumType('CRC32', 'full_object')).toHaveProperty('refused');
  });
});
