/**
 * From query bytes to response bytes: parse, resolve, render with truncation, and a cache of
 * rendered responses so that repeated questions cost a lookup and a copy. A cached response is
 * reused only for a question written the same way (no compression in it) and is patched with the
 * query's id, flags and question bytes, so the query's letter case comes back as it was sent.
 */
import type { ServedTsigKey } from '../server-contract.js';
import { type Answer, type AnswerKind, resolve, ZoneIndex } from './answer.js';
import { wireLength } from './names.js';
import {
  appendAdditional,
  serverTime,
  sign,
  type TsigVerdict,
  tsigRecordSize,
  unsignedTsigError,
  verifyRequest,
} from './tsig.js';
import { CLASS_IN, OPCODE, RCODE, T } from './types.js';
import { MalformedQuery, parseQuery, type Query } from './wire-reader.js';
import { MAX_MESSAGE, MessageWriter } from './wire-writer.js';
import type { RRset, Zone } from './zone-view.js';

/** Largest UDP response we send (DNS flag day 2020: no IP fragmentation). */
export const UDP_MAX = 1232;
const CACHE_LIMIT = 50_000;
/** Cached responses carry signatures made at one time; keep them well inside their validity. */
const CACHE_TTL_MS = 5 * 60_000;

export interface Handled {
  response: Buffer | null;
  query: Query | null;
  zone: Zone | null;
  kind: AnswerKind | 'error';
}

interface CacheEntry {
  bytes: Buffer;
  zone: Zone | null;
  kind: AnswerKind;
  expires: number;
}

export class DnsEngine {
  private index = new ZoneIndex(new Map());
  private keys: ReadonlyMap<string, ServedTsigKey> = new Map();
  private readonly cache = new Map<string, CacheEntry>();
  private readonly scratch = Buffer.alloc(MAX_MESSAGE + 512);

  constructor(
    private readonly now: () => number = Date.now,
    /** Told of every unexpected exception (answered SERVFAIL), with the query: a bug to log with its stack. */
    private readonly onError: (err: unknown, q: Query) => void = () => {},
  ) {}

  setZones(zones: ReadonlyMap<string, Zone>): void {
    this.index = new ZoneIndex(zones);
    this.cache.clear();
  }

  get zones(): ReadonlyMap<string, Zone> {
    return this.index.zones;
  }

  /** The TSIG keys signed requests are checked against, by lowercase name. */
  setKeys(keys: ReadonlyMap<string, ServedTsigKey>): void {
    this.keys = keys;
  }

  get tsigKeys(): ReadonlyMap<string, ServedTsigKey> {
    return this.keys;
  }

  /** Seconds since the epoch, for TSIG times (compared with the client's real clock). */
  nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }

  /** The verdict on a signed message (null when unsigned). */
  verify(q: Query, msg: Buffer): TsigVerdict<ServedTsigKey> | null {
    return verifyRequest(q, msg, this.keys, this.nowSeconds());
  }

  /** A response to a verified request, signed with its key over the request's MAC (RFC 8945 §5.3). */
  signResponse(response: Buffer, verdict: TsigVerdict & { ok: true }): Buffer {
    return sign(response, verdict.key, this.nowSeconds(), { previousMac: verdict.requestMac }).message;
  }

  /** Never throws: malformed input gives FORMERR or nothing. */
  handle(msg: Buffer, transport: 'udp' | 'tcp'): Handled {
    let q: Query | null;
    try {
      q = parseQuery(msg);
    } catch (err) {
      const id = err instanceof MalformedQuery ? err.id : null;
      return {
        response: id === null ? null : headerOnly(msg, (err as MalformedQuery).rcode),
        query: null,
        zone: null,
        kind: 'error',
      };
    }
    if (!q) return { response: null, query: null, zone: null, kind: 'error' };
    try {
      return this.answer(q, msg, transport);
    } catch (err) {
      this.onError(err, q);
      return { response: headerOnly(msg, RCODE.SERVFAIL), query: q, zone: null, kind: 'error' };
    }
  }

  private answer(q: Query, msg: Buffer, transport: 'udp' | 'tcp'): Handled {
    const error = (rcode: number): Handled => ({
      response: this.render(q, null, rcode, transport === 'udp' ? udpLimit(q) : MAX_MESSAGE),
      query: q,
      zone: null,
      kind: 'error',
    });
    // A signed message is verified before anything else (RFC 8945 §5.2).
    const verdict = this.verify(q, msg);
    if (verdict && !verdict.ok)
      return { ...error(verdict.rcode), response: this.tsigError(q, verdict, transport) };
    if (!verdict) return this.answerUnsigned(q, msg, transport, 0);
    const h = this.answerUnsigned(q, msg, transport, tsigRecordSize(verdict.key));
    return h.response ? { ...h, response: this.signResponse(h.response, verdict) } : h;
  }

  private answerUnsigned(q: Query, msg: Buffer, transport: 'udp' | 'tcp', reserve: number): Handled {
    const error = (rcode: number): Handled => ({
      response: this.render(q, null, rcode, transport === 'udp' ? udpLimit(q) : MAX_MESSAGE),
      query: q,
      zone: null,
      kind: 'error',
    });
    if (q.opcode !== OPCODE.QUERY) return error(RCODE.NOTIMP);
    if (q.edns && q.edns.version > 0) return error(16); // BADVERS (RFC 6891 §6.1.3)
    if (q.qclass !== CLASS_IN) return error(RCODE.REFUSED);
    if (q.qtype === T.AXFR || q.qtype === T.IXFR || q.qtype === T.OPT) return error(RCODE.FORMERR);
    // A signed answer leaves room for its TSIG record, and is never cached (it is signed per query).
    const limit = (transport === 'udp' ? udpLimit(q) : MAX_MESSAGE) - reserve;
    const plain = reserve === 0 && q.questionEnd === 12 + wireLength(q.labels) + 4;
    const ednsKey = q.edns ? 1 + (q.edns.do ? 2 : 0) + (q.edns.co ? 4 : 0) : 0;
    const cacheKey = plain ? `${q.key}|${q.qtype}|${ednsKey}|${limit}` : null;
    if (cacheKey) {
      const hit = this.cache.get(cacheKey);
      if (hit && hit.expires > this.now()) {
        const out = Buffer.allocUnsafe(hit.bytes.length);
        hit.bytes.copy(out);
        msg.copy(out, 0, 0, 2); // id
        out[2] = (out[2]! & ~0x01) | (msg[2]! & 0x01); // RD
        out[3] = (out[3]! & ~0x10) | (msg[3]! & 0x10); // CD
        msg.copy(out, 12, 12, q.questionEnd); // the question, in the query's case
        return { response: out, query: q, zone: hit.zone, kind: hit.kind };
      }
    }
    const ans = resolve(this.index, q.labels, q.qtype, q.edns?.do === true, q.edns?.co === true);
    const response = this.render(q, ans, ans.rcode, limit);
    if (cacheKey) {
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      this.cache.set(cacheKey, {
        bytes: response,
        zone: ans.zone,
        kind: ans.kind,
        expires: this.now() + CACHE_TTL_MS,
      });
    }
    return { response, query: q, zone: ans.zone, kind: ans.kind };
  }

  /**
   * The answer to a signed message that failed verification: NOTAUTH with an unsigned TSIG
   * record for BADKEY and BADSIG (§5.3.2); for BADTIME signed, with the request's time and
   * ours in Other Data (§5.2.3); a MAC of an impossible length is FORMERR (§5.2.2.1).
   */
  tsigError(q: Query, verdict: TsigVerdict & { ok: false }, transport: 'udp' | 'tcp'): Buffer {
    const response = this.render(q, null, verdict.rcode, transport === 'udp' ? udpLimit(q) : MAX_MESSAGE);
    if (verdict.rcode === RCODE.FORMERR) return response;
    if (verdict.key && verdict.requestMac) {
      const now = this.nowSeconds();
      return sign(response, verdict.key, now, {
        previousMac: verdict.requestMac,
        error: verdict.error,
        other: serverTime(now),
        timeSigned: q.tsig!.timeSigned,
      }).message;
    }
    return appendAdditional(response, unsignedTsigError(q.tsig!, verdict.error));
  }

  render(q: Query, ans: Answer | null, rcode: number, limit: number): Buffer {
    const w = new MessageWriter(this.scratch);
    const optLength = q.edns ? 11 : 0;
    w.u16(q.id);
    w.u16(0); // flags, set below
    w.u16(1);
    w.u16(0);
    w.u16(0);
    w.u16(0);
    w.name(q.labels, false);
    w.u16(q.qtype);
    w.u16(q.qclass);
    const questionEnd = w.pos;
    const namesAfterQuestion = w.snapshotNames();
    let an = 0;
    let ns = 0;
    let ar = 0;
    let tc = false;
    if (ans) {
      const signer = ans.dnssec ? ans.zone!.signer : null;
      const section = (sets: RRset[]): number => {
        let count = 0;
        for (const set of sets) {
          for (const rr of set.rrs) w.rr(set.labels, set.type, set.ttl, rr);
          count += set.rrs.length;
          // NS at a zone cut belongs to the child and is never signed by the parent (RFC 4035 §2.2).
          if (signer && !(set.type === T.NS && set.key !== ans.zone!.apexKey)) {
            w.rr(set.labels, T.RRSIG, set.ttl, signer.rrsig(set));
            count++;
          }
        }
        return count;
      };
      an = section(ans.answer);
      ns = section(ans.authority);
      if (w.pos + optLength > limit) {
        // RFC 2181 §9: an incomplete answer sets TC; the client retries over TCP.
        tc = true;
        an = ns = 0;
        w.reset(questionEnd, namesAfterQuestion);
      } else {
        for (const set of ans.additional) {
          const before = w.pos;
          for (const rr of set.rrs) w.rr(set.labels, set.type, set.ttl, rr);
          if (w.pos + optLength > limit) {
            w.reset(before);
            break;
          }
          ar += set.rrs.length;
        }
      }
    }
    if (q.edns) {
      w.u8(0);
      w.u16(T.OPT);
      w.u16(UDP_MAX);
      w.u32(((rcode >> 4) << 24) | (q.edns.do ? 0x8000 : 0) | (q.edns.do && q.edns.co ? 0x4000 : 0));
      w.u16(0);
      ar++;
    }
    const aa = ans?.aa ?? false;
    const flags =
      0x8000 |
      (q.opcode << 11) |
      (aa ? 0x0400 : 0) |
      (tc ? 0x0200 : 0) |
      (q.rd ? 0x0100 : 0) |
      (q.cd ? 0x0010 : 0) |
      (rcode & 0xf);
    this.scratch.writeUInt16BE(flags, 2);
    this.scratch.writeUInt16BE(an, 6);
    this.scratch.writeUInt16BE(ns, 8);
    this.scratch.writeUInt16BE(ar, 10);
    return Buffer.from(this.scratch.subarray(0, w.pos));
  }
}

function udpLimit(q: Query): number {
  return q.edns ? Math.min(q.edns.payload, UDP_MAX) : 512;
}

/** A response of just the header, for packets whose question cannot be trusted. */
export function headerOnly(msg: Buffer, rcode: number): Buffer {
  const out = Buffer.alloc(12);
  msg.copy(out, 0, 0, 2);
  const opcode = (msg[2]! >> 3) & 0xf;
  out.writeUInt16BE(0x8000 | (opcode << 11) | (msg[2]! & 0x01 ? 0x0100 : 0) | rcode, 2);
  return out;
}
