import { describe, expect, it } from 'vitest';
import { canonicalIp } from './nic-update.js';

describe('canonicalIp', () => {
  it('canonicalises IPv4, IPv6 and IPv4-mapped IPv6', () => {
    expect(canonicalIp('192.0.2.7')).toEqual({ family: 4, address: '192.0.2.7' });
    expect(canonicalIp('2001:DB8:0:0::1')).toEqual({ family: 6, address: '2001:db8::1' });
    expect(canonicalIp('::ffff:192.0.2.7')).toEqual({ family: 4, address: '192.0.2.7' });
  });

  it('refuses what is not a publishable address, without throwing', () => {
    for (const raw of ['2001:db8::1%eth0', 'fe80::1%25en0', '192.0.2.256', 'example.com', '', '[::1]'])
      expect(canonicalIp(raw), raw).toBeNull();
  });
});
