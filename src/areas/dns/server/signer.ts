/**
 * Online DNSSEC signing (RFC 4034, 4035) with ECDSA P-256 / SHA-256 (algorithm 13, RFC 6605),
 * on node:crypto. Signatures are cached on the RRset; they are valid from one hour before the
 * hour they were made (clock skew of validators) to a week later, and renewed after three days.
 * Times are wall-clock on purpose: validators check them against real time, not the emulator's.
 */
import { createPrivateKey, type KeyObject, sign } from 'node:crypto';
import type { ZoneSigningKey } from '../server-contract.js';
import { canonicalName } from './names.js';
import { makeRr, type Rr } from './rdata.js';
import type { RRset } from './zone-view.js';

const HOUR = 3600;
const VALIDITY = 7 * 24 * HOUR;
const RENEW_AFTER = 3 * 24 * HOUR;

export class Signer {
  private readonly privateKey: KeyObject;
  private readonly signerName: Buffer;

  constructor(
    apexLabels: string[],
    readonly key: ZoneSigningKey,
    private readonly now: () => number,
  ) {
    this.privateKey = createPrivateKey({ key: key.privateKeyPkcs8, format: 'der', type: 'pkcs8' });
    this.signerName = canonicalName(apexLabels);
  }

  /** The RRSIG RDATA over `set`, from the cache when still fresh. */
  rrsig(set: RRset): Rr {
    const nowSec = Math.floor(this.now() / 1000);
    if (set.sig && nowSec < set.sig.refreshAt) return set.sig.rr;
    const inception = Math.floor(nowSec / HOUR) * HOUR - HOUR;
    const rr = this.signRRset(set, inception, inception + HOUR + VALIDITY);
    set.sig = { rr, refreshAt: inception + HOUR + RENEW_AFTER };
    return rr;
  }

  signRRset(set: RRset, inception: number, expiration: number): Rr {
    // RFC 4034 §3.1.3: the labels field does not count a leading wildcard label.
    const labelCount = set.labels.length - (set.labels[0] === '*' ? 1 : 0);
    const head = Buffer.alloc(18);
    head.writeUInt16BE(set.type, 0);
    head[2] = this.key.algorithm;
    head[3] = labelCount;
    head.writeUInt32BE(set.ttl >>> 0, 4);
    head.writeUInt32BE(expiration >>> 0, 8);
    head.writeUInt32BE(inception >>> 0, 12);
    head.writeUInt16BE(this.key.keyTag, 16);
    const rdataHead = Buffer.concat([head, this.signerName]);
    const signature = sign('sha256', signedData(rdataHead, set), {
      key: this.privateKey,
      dsaEncoding: 'ieee-p1363', // r‖s, 64 bytes (RFC 6605 §4), not DER
    });
    return makeRr([rdataHead, signature]);
  }
}

/** RFC 4034 §3.1.8.1: RRSIG RDATA (no signature) followed by the RRs in canonical order. */
export function signedData(rdataHead: Buffer, set: RRset): Buffer {
  const owner = canonicalName(set.labels);
  const rdatas = [
    ...new Map(set.rrs.map((r) => [r.canonical.toString('latin1'), r.canonical])).values(),
  ].sort(Buffer.compare);
  const parts: Buffer[] = [rdataHead];
  for (const rdata of rdatas) {
    const fixed = Buffer.alloc(10);
    fixed.writeUInt16BE(set.type, 0);
    fixed.writeUInt16BE(1, 2);
    fixed.writeUInt32BE(set.ttl >>> 0, 4);
    fixed.writeUInt16BE(rdata.length, 8);
    parts.push(owner, fixed, rdata);
  }
  return Buffer.concat(parts);
}
