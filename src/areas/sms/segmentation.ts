/**
 * SMS encoding (3GPP TS 23.038 and 23.040): GSM-7 septets and UCS-2 bytes of the parts that
 * segments.ts counts and splits, and the concatenation header.
 */
import { BASIC_CODE, EXTENSION_BY_CODE, GSM7_BASIC, GSM7_EXTENSION, type SmsEncoding } from './segments.js';

export * from './segments.js';

/** GSM-7 septets, one per octet (unpacked, as SMPP carries data_coding 0). */
export function encodeGsm7(text: string): Buffer {
  const out: number[] = [];
  for (const ch of text) {
    const basic = BASIC_CODE.get(ch);
    if (basic !== undefined) out.push(basic);
    else if (ch in GSM7_EXTENSION) out.push(0x1b, GSM7_EXTENSION[ch]!);
    else throw new RangeError(`character U+${ch.codePointAt(0)!.toString(16)} is not in GSM-7`);
  }
  return Buffer.from(out);
}

export function decodeGsm7(septets: Buffer): string {
  let out = '';
  for (let i = 0; i < septets.length; i++) {
    const s = septets[i]! & 0x7f;
    if (s === 0x1b && i + 1 < septets.length) {
      out += EXTENSION_BY_CODE.get(septets[++i]! & 0x7f) ?? ' ';
    } else {
      out += GSM7_BASIC[s] ?? ' ';
    }
  }
  return out;
}

/** UTF-16 big-endian, as SMPP carries data_coding 8 (non-BMP characters as surrogate pairs). */
export function encodeUcs2(text: string): Buffer {
  const buf = Buffer.alloc(text.length * 2);
  for (let i = 0; i < text.length; i++) buf.writeUInt16BE(text.charCodeAt(i), i * 2);
  return buf;
}

export function decodeUcs2(bytes: Buffer): string {
  let out = '';
  for (let i = 0; i + 1 < bytes.length; i += 2) out += String.fromCharCode(bytes.readUInt16BE(i));
  return out;
}

export const encodePart = (text: string, encoding: SmsEncoding): Buffer =>
  encoding === 'GSM7' ? encodeGsm7(text) : encodeUcs2(text);

/** The concatenation UDH (IEI 0x00, 8-bit reference): `05 00 03 ref total seq`. */
export function concatenationUdh(reference: number, total: number, sequence: number): Buffer {
  return Buffer.from([0x05, 0x00, 0x03, reference & 0xff, total, sequence]);
}
