/**
 * NOTIFY (RFC 1996) to the secondaries of FJORD_DNS_NOTIFY, and to those of every TSIG key that
 * covers the zone (signed with that key, RFC 8945), when a zone's serial changes: a NOTIFY query
 * with the zone's SOA, resent every two seconds until the secondary acknowledges it (at most
 * five times).
 */
import { randomInt } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { ServedTsigKey } from '../server-contract.js';
import { keyCoversZone } from './axfr.js';
import { sign } from './tsig.js';
import { OPCODE, T } from './types.js';
import { MessageWriter } from './wire-writer.js';
import type { Zone } from './zone-view.js';

const RETRY_MS = 2000;
const ATTEMPTS = 5;

export interface NotifyTarget {
  host: string;
  port: number;
}

export function parseTargets(list: string[]): NotifyTarget[] {
  return list.map((item) => {
    const m = item.match(/^\[?([^\]]+?)\]?(?::(\d+))?$/);
    const host = m?.[1] ?? item;
    return { host, port: m?.[2] ? Number(m[2]) : 53 };
  });
}

export class Notifier {
  private sockets = new Map<4 | 6, Socket>();
  private readonly pending = new Map<number, { timer: NodeJS.Timeout }>();

  constructor(
    private readonly targets: NotifyTarget[],
    private readonly log: Logger,
    /** The keys held now, whose `notify` secondaries get signed NOTIFY. */
    private readonly keys: () => Iterable<ServedTsigKey> = () => [],
    /** Seconds since the epoch, for the signature's time. */
    private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  notify(zone: Zone): void {
    for (const target of this.targets) this.send(zone, target, null);
    for (const key of this.keys()) {
      if (key.notify.length === 0 || !keyCoversZone(key, zone.apexKey)) continue;
      for (const target of parseTargets(key.notify)) this.send(zone, target, key);
    }
  }

  close(): void {
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    for (const s of this.sockets.values()) s.close();
    this.sockets.clear();
  }

  private socket(family: 4 | 6): Socket {
    let s = this.sockets.get(family);
    if (!s) {
      s = createSocket(family === 6 ? 'udp6' : 'udp4');
      s.on('message', (msg) => {
        if (msg.length < 12 || !(msg[2]! & 0x80) || ((msg[2]! >> 3) & 0xf) !== OPCODE.NOTIFY) return;
        const p = this.pending.get(msg.readUInt16BE(0));
        if (p) {
          clearTimeout(p.timer);
          this.pending.delete(msg.readUInt16BE(0));
        }
      });
      s.on('error', (err) => this.log.warn({ err }, 'dns: notify socket error'));
      s.unref();
      this.sockets.set(family, s);
    }
    return s;
  }

  private send(zone: Zone, target: NotifyTarget, key: ServedTsigKey | null): void {
    let id = randomInt(0, 65536);
    while (this.pending.has(id)) id = (id + 1) & 0xffff;
    const w = new MessageWriter(Buffer.alloc(1024));
    w.u16(id);
    w.u16((OPCODE.NOTIFY << 11) | 0x0400); // NOTIFY, AA
    w.u16(1);
    w.u16(1);
    w.u16(0);
    w.u16(0);
    w.name(zone.apexLabels, false);
    w.u16(T.SOA);
    w.u16(1);
    w.rr(zone.apexLabels, T.SOA, zone.soa.ttl, zone.soa.rrs[0]!);
    const unsigned = Buffer.from(w.buf.subarray(0, w.pos));
    // Signed once: a resend is the same message, well inside the signature's fudge.
    const packet = key ? sign(unsigned, key, this.nowSeconds()).message : unsigned;
    const socket = this.socket(isIP(target.host) === 6 ? 6 : 4);
    let attempt = 0;
    const fire = () => {
      if (++attempt > ATTEMPTS) {
        this.pending.delete(id);
        this.log.warn({ zone: zone.snapshot.apex, target }, 'dns: secondary never acknowledged NOTIFY');
        return;
      }
      socket.send(packet, target.port, target.host, (err) => {
        if (err) this.log.warn({ err, target }, 'dns: could not send NOTIFY');
      });
      const timer = setTimeout(fire, RETRY_MS);
      timer.unref();
      this.pending.set(id, { timer });
    };
    fire();
  }
}
