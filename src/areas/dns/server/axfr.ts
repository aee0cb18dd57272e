/**
 * Zone transfer (RFC 5936) over TCP to the addresses allowed by FJORD_DNS_AXFR_ALLOW, or to
 * requests signed with a TSIG key that covers the zone: the SOA,
 * every RRset, the SOA again, packed into messages of about 16 KiB. IXFR is answered with a
 * full transfer (RFC 1995 §4 allows it). Signed zones are signed online, so no RRSIG or NSEC is
 * transferred; the DNSKEY is.
 */
import { BlockList, isIP } from 'node:net';
import { RCODE, T } from './types.js';
import type { Query } from './wire-reader.js';
import { MessageWriter } from './wire-writer.js';
import type { RRset, Zone } from './zone-view.js';

const MESSAGE_TARGET = 16_000;

export function allowList(cidrs: string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address, prefix] = cidr.split('/');
    const family = isIP(address!) === 6 ? 'ipv6' : 'ipv4';
    const bits = prefix === undefined ? (family === 'ipv6' ? 128 : 32) : Number(prefix);
    list.addSubnet(address!, bits, family);
  }
  return list;
}

export function transferAllowed(list: BlockList, address: string): boolean {
  const plain = address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
  return list.check(plain, isIP(plain) === 6 ? 'ipv6' : 'ipv4');
}

/** Whether a TSIG key may transfer the zone: a key names its zones, or none for all of them. */
export function keyCoversZone(key: { zones?: readonly string[] | null }, apexKey: string): boolean {
  return !key.zones || key.zones.includes(apexKey);
}

/** The messages of a transfer of `zone` answering `q`. */
export function axfrMessages(q: Query, zone: Zone): Buffer[] {
  const sets: RRset[] = [zone.soa];
  for (const node of zone.nodes.values()) {
    for (const set of node.rrsets.values()) if (set.type !== T.SOA) sets.push(set);
  }
  sets.push(zone.soa);
  const messages: Buffer[] = [];
  let w: MessageWriter | null = null;
  let count = 0;
  const finish = () => {
    if (!w) return;
    w.buf.writeUInt16BE(count, 6);
    messages.push(Buffer.from(w.buf.subarray(0, w.pos)));
    w = null;
  };
  for (const set of sets) {
    for (const rr of set.rrs) {
      if (!w) {
        w = new MessageWriter(Buffer.alloc(65535));
        count = 0;
        const first = messages.length === 0;
        w.u16(q.id);
        w.u16(0x8400); // QR, AA
        w.u16(first ? 1 : 0);
        w.u16(0);
        w.u16(0);
        w.u16(0);
        if (first) {
          w.name(q.labels, false);
          w.u16(q.qtype);
          w.u16(q.qclass);
        }
      }
      w.rr(set.labels, set.type, set.ttl, rr);
      count++;
      if (w.pos > MESSAGE_TARGET) finish();
    }
  }
  finish();
  return messages;
}

/** A REFUSED or NOTAUTH answer to a transfer request. */
export function transferError(q: Query, rcode: number = RCODE.REFUSED): Buffer {
  const w = new MessageWriter(Buffer.alloc(600));
  w.u16(q.id);
  w.u16(0x8000 | rcode);
  w.u16(1);
  w.u16(0);
  w.u16(0);
  w.u16(0);
  w.name(q.labels, false);
  w.u16(q.qtype);
  w.u16(q.qclass);
  return Buffer.from(w.buf.subarray(0, w.pos));
}
