/**
 * Writes DNS messages with name compression (RFC 1035 §4.1.4), which dns-packet does not do.
 * Every name written at an offset below 0x4000 is remembered by its lowercase suffixes, so later
 * names point at it — including at the question, which keeps the query's letter case in answers.
 */
import { asciiLower } from './names.js';
import type { Rr } from './rdata.js';

export const MAX_MESSAGE = 65535;

export class MessageTooLarge extends Error {}

export class MessageWriter {
  pos = 0;
  private names = new Map<string, number>();

  constructor(readonly buf: Buffer) {}

  reset(pos: number, names?: Map<string, number>): void {
    this.pos = pos;
    if (names) this.names = names;
  }

  snapshotNames(): Map<string, number> {
    return new Map(this.names);
  }

  private room(n: number): void {
    if (this.pos + n > MAX_MESSAGE) throw new MessageTooLarge('message over 65535 bytes');
  }

  u8(n: number): void {
    this.room(1);
    this.buf[this.pos++] = n;
  }

  u16(n: number): void {
    this.room(2);
    this.buf.writeUInt16BE(n, this.pos);
    this.pos += 2;
  }

  u32(n: number): void {
    this.room(4);
    this.buf.writeUInt32BE(n >>> 0, this.pos);
    this.pos += 4;
  }

  bytes(b: Buffer): void {
    this.room(b.length);
    b.copy(this.buf, this.pos);
    this.pos += b.length;
  }

  name(labels: readonly string[], compress: boolean): void {
    // Suffix keys from the right: key(i) = lower(label i) + '.' + key(i+1).
    const keys = new Array<string>(labels.length);
    let suffix = '';
    for (let i = labels.length - 1; i >= 0; i--) {
      const label = asciiLower(labels[i]!).replace(/[.\\]/g, (c) => `\\${c}`);
      suffix = suffix === '' ? label : `${label}.${suffix}`;
      keys[i] = suffix;
    }
    for (let i = 0; i < labels.length; i++) {
      const key = keys[i]!;
      if (compress) {
        const at = this.names.get(key);
        if (at !== undefined) {
          this.u16(0xc000 | at);
          return;
        }
      }
      if (this.pos < 0x4000 && !this.names.has(key)) this.names.set(key, this.pos);
      const label = labels[i]!;
      this.room(1 + label.length);
      this.buf[this.pos++] = label.length;
      this.pos += this.buf.write(label, this.pos, 'latin1');
    }
    this.u8(0);
  }

  /** One resource record of class IN. */
  rr(owner: readonly string[], type: number, ttl: number, rr: Rr): void {
    this.name(owner, true);
    this.u16(type);
    this.u16(1);
    this.u32(ttl);
    const lengthAt = this.pos;
    this.u16(0);
    for (const seg of rr.segs) {
      if (Buffer.isBuffer(seg)) this.bytes(seg);
      else this.name(seg.labels, seg.compress);
    }
    this.buf.writeUInt16BE(this.pos - lengthAt - 2, lengthAt);
  }
}
