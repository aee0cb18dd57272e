/**
 * The in-memory form of one hosted zone, built from a `ZoneSnapshot`: nodes by lowercase name
 * (empty non-terminals included, since they block wildcards, RFC 4592 §2.2.2), RRsets by type,
 * RDATA pre-encoded. Rebuilt whole when the zone changes; the old one stays valid for queries
 * in flight.
 */
import type { ZoneSnapshot } from '../server-contract.js';
import { checkLabels, nameKey, splitName } from './names.js';
import { dnskeyRr, type Rr, recordRr, soaRr } from './rdata.js';
import { Signer } from './signer.js';
import { T } from './types.js';

export interface RRset {
  labels: string[];
  key: string;
  type: number;
  ttl: number;
  rrs: Rr[];
  /** Cached RRSIG for this RRset (see Signer). */
  sig?: { rr: Rr; refreshAt: number };
}

export interface ZoneNode {
  key: string;
  labels: string[];
  rrsets: Map<number, RRset>;
}

const SYNTH_CACHE_LIMIT = 20_000;

export class Zone {
  readonly apexLabels: string[];
  readonly apexKey: string;
  readonly nodes = new Map<string, ZoneNode>();
  readonly soa: RRset;
  /** The SOA as it appears in negative answers: TTL = min(SOA TTL, MINIMUM) (RFC 2308 §3). */
  readonly negativeSoa: RRset;
  readonly negativeTtl: number;
  readonly signer: Signer | null;
  readonly skipped: string[] = [];
  /** RRsets made per query (wildcard expansions, NSEC black lies), kept with their signatures. */
  private readonly synthesized = new Map<string, RRset>();

  constructor(
    readonly snapshot: ZoneSnapshot,
    now: () => number,
  ) {
    this.apexLabels = splitName(snapshot.apex);
    this.apexKey = nameKey(this.apexLabels);
    const apex = this.node(this.apexLabels);
    const soa = snapshot.soa;
    this.soa = this.add(apex, T.SOA, soa.ttl, soaRr(soa));
    this.negativeTtl = Math.min(soa.ttl, soa.minimum);
    this.negativeSoa = { ...this.soa, ttl: this.negativeTtl, sig: undefined };
    for (const ns of new Set(snapshot.nameservers.map((n) => n.toLowerCase().replace(/\.$/, '')))) {
      this.add(apex, T.NS, soa.ttl, recordRr({ type: 'NS', target: ns }).rr);
    }
    for (const record of snapshot.records) {
      const labels = splitName(record.name.toLowerCase());
      const inside =
        labels.length >= this.apexLabels.length &&
        nameKey(labels.slice(labels.length - this.apexLabels.length)) === this.apexKey;
      try {
        if (!inside) throw new Error('outside the zone');
        if (!checkLabels(labels)) throw new Error('not a valid domain name');
        const { type, rr } = recordRr(record.data);
        const node = this.node(labels);
        if (
          type === T.NS &&
          node === apex &&
          apex.rrsets.get(T.NS)?.rrs.some((r) => r.canonical.equals(rr.canonical))
        )
          continue;
        this.add(node, type, record.ttl, rr);
      } catch (err) {
        this.skipped.push(`${record.name} ${record.data.type}: ${(err as Error).message}`);
      }
    }
    const key = snapshot.signingKey;
    this.signer = key ? new Signer(this.apexLabels, key, now) : null;
    if (key) this.add(apex, T.DNSKEY, soa.ttl, dnskeyRr(key));
  }

  get apexNode(): ZoneNode {
    return this.nodes.get(this.apexKey)!;
  }

  /** The node of `labels`, creating it and the empty non-terminals above it up to the apex. */
  private node(labels: string[]): ZoneNode {
    const key = nameKey(labels);
    let node = this.nodes.get(key);
    if (!node) {
      node = { key, labels, rrsets: new Map() };
      this.nodes.set(key, node);
      if (labels.length > this.apexLabels.length) this.node(labels.slice(1));
    }
    return node;
  }

  private add(node: ZoneNode, type: number, ttl: number, rr: Rr): RRset {
    let set = node.rrsets.get(type);
    if (!set) {
      set = { labels: node.labels, key: node.key, type, ttl, rrs: [] };
      node.rrsets.set(type, set);
    }
    // RFC 2181 §5.2: one TTL per RRset; take the lowest.
    set.ttl = Math.min(set.ttl, ttl);
    if (!set.rrs.some((r) => r.canonical.equals(rr.canonical))) set.rrs.push(rr);
    return set;
  }

  /** A per-query RRset, remembered (bounded) so its signature is computed once. */
  synth(cacheKey: string, build: () => RRset): RRset {
    let set = this.synthesized.get(cacheKey);
    if (!set) {
      if (this.synthesized.size >= SYNTH_CACHE_LIMIT) this.synthesized.clear();
      set = build();
      this.synthesized.set(cacheKey, set);
    }
    return set;
  }
}
