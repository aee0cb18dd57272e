import { describe, expect, it } from 'vitest';
import { codeMatches, generateCode, hashCode } from '../../src/areas/verify/codes.js';
import { BuiltinIpReputation, specialRangeOf } from '../../src/areas/verify/ip-risk.js';
import { LOCALES, smsText, VOICE_LOCALES, voiceScript } from '../../src/areas/verify/messages.js';
import { normaliseRecipient, phonePrefix } from '../../src/areas/verify/recipients.js';

describe('codes', () => {
  it('draws every digit position uniformly enough, leading zeros included', () => {
    const firsts = new Map<string, number>();
    for (let i = 0; i < 5000; i++) {
      const code = generateCode(6);
      expect(code).toMatch(/^\d{6}$/);
      firsts.set(code[0]!, (firsts.get(code[0]!) ?? 0) + 1);
    }
    expect(firsts.size).toBe(10);
    for (const n of firsts.values()) expect(n).toBeGreaterThan(350);
  });

  it('matches only the code that was hashed, with a fresh salt each time', () => {
    const a = hashCode('012345');
    const b = hashCode('012345');
    expect(a.salt).not.toBe(b.salt);
    expect(a.hash).not.toBe(b.hash);
    expect(codeMatches('012345', a)).toBe(true);
    expect(codeMatches('12345', a)).toBe(false);
    expect(codeMatches('0123456', a)).toBe(false);
    expect(codeMatches('', a)).toBe(false);
  });
});

describe('ip ranges', () => {
  it.each([
    ['10.0.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', null],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'shared'],
    ['127.0.0.1', 'loopback'],
    ['169.254.10.10', 'link_local'],
    ['192.0.2.1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['0.0.0.0', 'unspecified'],
    ['8.8.8.8', null],
    ['::1', 'loopback'],
    ['fd00::1', 'private'],
    ['fe80::1', 'link_local'],
    ['2001:db8::1', 'documentation'],
    ['::ffff:10.1.1.1', 'private'],
    ['::ffff:8.8.8.8', null],
    ['::ffff:a01:101', 'private'],
    ['::FFFF:808:808', null],
    ['2a00:1450:4001:82b::200e', null],
  ])('%s is %s', (ip, range) => {
    expect(specialRangeOf(ip)).toBe(range);
  });

  it('scores special ranges medium and public addresses low', async () => {
    const rep = new BuiltinIpReputation();
    expect(await rep.assess('8.8.8.8')).toMatchObject({ score: 0, level: 'low', is_private: false });
    expect(await rep.assess('192.168.0.10')).toMatchObject({ score: 50, level: 'medium', is_private: true });
  });
});

describe('messages', () => {
  it('has a text for every locale and a voice script for every voice locale', () => {
    for (const l of LOCALES) expect(smsText(l, '1234', 300)).toContain('1234');
    for (const l of VOICE_LOCALES) {
      const script = voiceScript(l, '907');
      expect(script).toHaveLength(3);
      expect(script[0]).toContain('9, 0, 7');
      expect(script[1]).toContain('9, 0, 7');
    }
  });

  it('states whole minutes of the TTL', () => {
    expect(smsText('en', '1', 60)).toContain('valid for 1 min');
    expect(smsText('en', '1', 899)).toContain('valid for 14 min');
    expect(smsText('fi', '1', 900)).toBe('Vahvistuskoodisi on 1. Se on voimassa 15 min.');
  });
});

describe('recipients', () => {
  it('keeps E.164 numbers and lower-cases e-mail domains', () => {
    expect(normaliseRecipient('sms', '+4791234567')).toBe('+4791234567');
    expect(normaliseRecipient('email', 'Kari.Nordmann@Example.NO')).toBe('Kari.Nordmann@example.no');
    expect(phonePrefix('+4791234567')).toBe('+479123');
    expect(phonePrefix('+14155550100')).toBe('+141555');
  });

  it.each([
    '4791234567',
    '+47 91234567',
    '+0123456789',
    '+4700000000',
    'a@b',
    'a..b@example.com',
    '@example.com',
  ])('refuses %s', (raw) => {
    const channel = raw.includes('@') ? 'email' : 'sms';
    expect(() => normaliseRecipient(channel, raw)).toThrow();
  });
});
