/**
 * SMS segmentation and encoding (3GPP TS 23.038 and 23.040), done exactly rather than estimated:
 * a text that fits the GSM 7-bit default alphabet (with its extension table, whose characters
 * take an escape septet and so count twice) is sent as GSM-7, 160 septets in one SMS or 153 per
 * part of a concatenated message (the 6-octet UDH takes the rest); any other text is UCS-2,
 * 70 UTF-16 code units alone or 67 per part, where a character outside the BMP is a surrogate
 * pair and counts as two. Parts never split an escape sequence or a surrogate pair.
 *
 * Counting only, with no Node APIs: the console imports it to count segments as one types.
 * The encoders are in segmentation.ts.
 */

/** The GSM 03.38 default alphabet in code order (0x1B, the escape, is left out as a character). */
export const GSM7_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\u001bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';

/** The extension table: character → the septet that follows the escape (0x1B). */
export const GSM7_EXTENSION: Record<string, number> = {
  '\f': 0x0a,
  '^': 0x14,
  '{': 0x28,
  '}': 0x29,
  '\\': 0x2f,
  '[': 0x3c,
  '~': 0x3d,
  ']': 0x3e,
  '|': 0x40,
  '€': 0x65,
};

export const BASIC_CODE = new Map<string, number>();
for (let i = 0; i < GSM7_BASIC.length; i++) if (i !== 0x1b) BASIC_CODE.set(GSM7_BASIC[i]!, i);
export const EXTENSION_BY_CODE = new Map(Object.entries(GSM7_EXTENSION).map(([ch, code]) => [code, ch]));

export type SmsEncoding = 'GSM7' | 'UCS2';

export const SINGLE_LIMIT: Record<SmsEncoding, number> = { GSM7: 160, UCS2: 70 };
export const PART_LIMIT: Record<SmsEncoding, number> = { GSM7: 153, UCS2: 67 };
/** SMPP data_coding: 0 = SMSC default alphabet (GSM-7), 8 = UCS-2. */
export const DATA_CODING: Record<SmsEncoding, number> = { GSM7: 0, UCS2: 8 };

export interface Segmentation {
  encoding: SmsEncoding;
  /** Septets (GSM-7) or UTF-16 code units (UCS-2) of the whole text. */
  units: number;
  /** The text of each part, in order. */
  parts: string[];
}

/** Septets a character takes in GSM-7 (1 basic, 2 extension), or 0 when it is not in the alphabet. */
export function gsm7Septets(ch: string): number {
  if (BASIC_CODE.has(ch)) return 1;
  if (ch in GSM7_EXTENSION) return 2;
  return 0;
}

export const isGsm7 = (text: string): boolean => [...text].every((ch) => gsm7Septets(ch) > 0);

/** Splits a text into the parts it is sent as. An empty text is one (empty) part. */
/** The most parts one message (or keyword auto-reply) may take: sends over it are refused. */
export const MAX_PARTS = 10;

export function segment(text: string): Segmentation {
  const chars = [...text]; // code points: a surrogate pair stays together
  const encoding: SmsEncoding = chars.every((ch) => gsm7Septets(ch) > 0) ? 'GSM7' : 'UCS2';
  const cost = (ch: string) => (encoding === 'GSM7' ? gsm7Septets(ch) : ch.length);
  const units = chars.reduce((n, ch) => n + cost(ch), 0);
  if (units <= SINGLE_LIMIT[encoding]) return { encoding, units, parts: [text] };
  const limit = PART_LIMIT[encoding];
  const parts: string[] = [];
  let current = '';
  let used = 0;
  for (const ch of chars) {
    const c = cost(ch);
    if (used + c > limit) {
      parts.push(current);
      current = '';
      used = 0;
    }
    current += ch;
    used += c;
  }
  parts.push(current);
  return { encoding, units, parts };
}
