import type smpp from 'smpp';
import { decodeGsm7, decodeUcs2 } from '../segmentation.js';
import type { Receipt } from './driver.js';

/** SMPP 3.4 §5.2.28 message_state → the receipt's `stat:` word. */
const MESSAGE_STATE: Record<number, string> = {
  1: 'ENROUTE',
  2: 'DELIVRD',
  3: 'EXPIRED',
  4: 'DELETED',
  5: 'UNDELIV',
  6: 'ACCEPTD',
  7: 'UNKNOWN',
  8: 'REJECTD',
};
/** States after which nothing more will happen to a message. */
const FINAL = new Set(['DELIVRD', 'EXPIRED', 'DELETED', 'UNDELIV', 'UNKNOWN', 'REJECTD']);

export type ParsedDeliver =
  | { kind: 'receipt'; final: boolean; receipt: Receipt }
  | {
      kind: 'mo';
      from: string;
      to: string;
      text: string;
      concat: { ref: number; total: number; seq: number } | null;
    };

/** A number from an SMPP address: international ones (TON 1) get their `+`. */
function number(addr: string, ton: number): string {
  if (ton === 1 || (/^\d{8,15}$/.test(addr) && ton === 0)) return `+${addr.replace(/^\+/, '')}`;
  return addr;
}

/** The text and UDH of short_message (or message_payload), whatever the library made of them. */
function textOf(pdu: smpp.PDU): { text: string; udh: Buffer[] } {
  const raw = pdu.message_payload ?? pdu.short_message;
  if (raw === undefined || raw === null) return { text: '', udh: [] };
  if (typeof raw === 'string') return { text: raw, udh: [] };
  if (Buffer.isBuffer(raw)) {
    const dc = (pdu.data_coding ?? 0) & 0x0f;
    return {
      text: dc === 8 ? decodeUcs2(raw) : dc === 0 ? decodeGsm7(raw) : raw.toString('latin1'),
      udh: [],
    };
  }
  const message = raw.message;
  const text =
    typeof message === 'string' ? message : Buffer.isBuffer(message) ? message.toString('latin1') : '';
  return { text, udh: Array.isArray(raw.udh) ? raw.udh : [] };
}

/** Concatenation info from the UDH's information elements (IEI 0x00, 8-bit ref; 0x08, 16-bit ref). */
function concatOf(udh: Buffer[]): { ref: number; total: number; seq: number } | null {
  for (const ie of udh) {
    if (ie[0] === 0x00 && ie.length >= 5) return { ref: ie[2]!, total: ie[3]!, seq: ie[4]! };
    if (ie[0] === 0x08 && ie.length >= 6) return { ref: ie.readUInt16BE(2), total: ie[4]!, seq: ie[5]! };
  }
  return null;
}

/**
 * Reads a deliver_sm: a delivery receipt (esm_class message type 0x04) by its TLVs
 * (receipted_message_id, message_state) or, failing those, the text format of SMPP 3.4
 * Appendix B (`id:… stat:DELIVRD err:000`); anything else is a mobile-originated message.
 */
export function parseDeliverSm(pdu: smpp.PDU): ParsedDeliver {
  const { text, udh } = textOf(pdu);
  const isReceipt = ((pdu.esm_class ?? 0) & 0x3c) === 0x04;
  if (isReceipt) {
    const id = pdu.receipted_message_id ?? /\bid:(\S+)/i.exec(text)?.[1] ?? '';
    const stat =
      (typeof pdu.message_state === 'number' ? MESSAGE_STATE[pdu.message_state] : undefined) ??
      /\bstat:(\w+)/i.exec(text)?.[1]?.toUpperCase() ??
      'UNKNOWN';
    const err = /\berr:(\w+)/i.exec(text)?.[1] ?? null;
    const delivered = stat === 'DELIVRD';
    return {
      kind: 'receipt',
      final: FINAL.has(stat),
      receipt: {
        smscMessageId: String(id),
        delivered,
        error: delivered ? null : `${stat}${err ? ` err:${err}` : ''}`,
      },
    };
  }
  return {
    kind: 'mo',
    from: number(String(pdu.source_addr ?? ''), pdu.source_addr_ton ?? 0),
    to: number(String(pdu.destination_addr ?? ''), pdu.dest_addr_ton ?? 0),
    text,
    concat: concatOf(udh),
  };
}
