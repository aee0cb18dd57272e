import { describe, expect, it } from 'vitest';
import { parseScheduledAt } from '../../src/areas/sms/schedule-time.js';
import {
  concatenationUdh,
  decodeGsm7,
  decodeUcs2,
  encodeGsm7,
  encodeUcs2,
  segment,
} from '../../src/areas/sms/segmentation.js';

const rep = (s: string, n: number) => s.repeat(n);

describe('segmentation against known cases', () => {
  const cases: [string, string, 'GSM7' | 'UCS2', number, number][] = [
    // name, text, encoding, units (septets / UTF-16 code units), parts
    ['empty', '', 'GSM7', 0, 1],
    ['plain ASCII', 'Hello world', 'GSM7', 11, 1],
    ['160 GSM-7 chars fit one SMS', rep('a', 160), 'GSM7', 160, 1],
    ['161 GSM-7 chars need two parts', rep('a', 161), 'GSM7', 161, 2],
    ['306 = 2 × 153', rep('a', 306), 'GSM7', 306, 2],
    ['307 needs three parts', rep('a', 307), 'GSM7', 307, 3],
    ['Norwegian letters are GSM-7 basic', 'Blåbærsyltetøy på Ærø, ÆØÅ æøå', 'GSM7', 30, 1],
    ['160 Norwegian letters still fit one', rep('æøå', 53) + 'Æ', 'GSM7', 160, 1],
    ['extension chars count twice', '{}[]~|^\\€', 'GSM7', 18, 1],
    ['80 euro signs are 160 septets', rep('€', 80), 'GSM7', 160, 1],
    ['81 euro signs split', rep('€', 81), 'GSM7', 162, 2],
    ['159 + one extension char overflows', rep('a', 159) + '€', 'GSM7', 161, 2],
    ['emoji forces UCS-2, counts as two', 'Hi 😀', 'UCS2', 5, 1],
    ['70 UCS-2 units fit one', rep('ж', 70), 'UCS2', 70, 1],
    ['71 UCS-2 units need two', rep('ж', 71), 'UCS2', 71, 2],
    ['134 = 2 × 67', rep('ж', 134), 'UCS2', 134, 2],
    ['135 needs three', rep('ж', 135), 'UCS2', 135, 3],
    ['35 emoji are 70 units', rep('😀', 35), 'UCS2', 70, 1],
    ['a non-GSM letter (ç is, but ć is not)', 'ćevapi', 'UCS2', 6, 1],
    ['Swedish/German umlauts are GSM-7', 'Smörgåsbord Füße', 'GSM7', 16, 1],
  ];
  for (const [name, text, encoding, units, parts] of cases) {
    it(name, () => {
      const s = segment(text);
      expect(s.encoding).toBe(encoding);
      expect(s.units).toBe(units);
      expect(s.parts.length).toBe(parts);
      expect(s.parts.join('')).toBe(text);
    });
  }

  it('never splits an escape sequence across parts', () => {
    const text = rep('a', 152) + '€' + rep('b', 10); // the € would straddle septet 153
    const s = segment(text);
    expect(s.parts.map((p) => [...p].length)).toEqual([152, 11]);
    for (const p of s.parts) expect(encodeGsm7(p).length).toBeLessThanOrEqual(153);
  });

  it('never splits a surrogate pair across parts', () => {
    const text = rep('ж', 66) + '😀' + 'xxx'; // 71 units: split at 67
    const s = segment(text);
    expect(s.parts).toEqual([rep('ж', 66), '😀xxx']);
  });

  it('encodes and decodes GSM-7 and UCS-2', () => {
    expect([...encodeGsm7('@£{€Å')]).toEqual([0x00, 0x01, 0x1b, 0x28, 0x1b, 0x65, 0x0e]);
    expect(decodeGsm7(encodeGsm7('Blåbær {x} € ^~'))).toBe('Blåbær {x} € ^~');
    expect(decodeUcs2(encodeUcs2('Hi 😀'))).toBe('Hi 😀');
    expect(encodeUcs2('😀').toString('hex')).toBe('d83dde00');
    expect([...concatenationUdh(7, 3, 2)]).toEqual([5, 0, 3, 7, 3, 2]);
  });
});

describe('scheduled_at with timezone', () => {
  it('reads an offset as given, and a local time in the zone (DST aware)', () => {
    expect(parseScheduledAt('2026-12-01T09:00:00Z', 'Europe/Oslo')).toBe(Date.UTC(2026, 11, 1, 9));
    expect(parseScheduledAt('2026-12-01T09:00:00+02:00', null)).toBe(Date.UTC(2026, 11, 1, 7));
    expect(parseScheduledAt('2026-12-01T09:00:00', null)).toBe(Date.UTC(2026, 11, 1, 9));
    expect(parseScheduledAt('2026-12-01T09:00:00', 'Europe/Oslo')).toBe(Date.UTC(2026, 11, 1, 8)); // CET
    expect(parseScheduledAt('2026-07-01T09:00', 'Europe/Oslo')).toBe(Date.UTC(2026, 6, 1, 7)); // CEST
    expect(parseScheduledAt('2026-12-01T09:00:00', 'America/New_York')).toBe(Date.UTC(2026, 11, 1, 14));
    expect(parseScheduledAt('2026-02-30T09:00:00', null)).toBeNull();
    expect(parseScheduledAt('tomorrow', null)).toBeNull();
  });
});
