/**
 * The answer engine: RFC 1034 §4.3.2 lookup within one hosted zone, with wildcards (RFC 4592),
 * CNAME chains inside the zone, delegations with glue, negative answers with the SOA (RFC 2308),
 * minimal ANY (RFC 8482), and — for signed zones and DO queries — denial of existence by
 * compact "black lies" NSEC (RFC 9824): NXDOMAIN becomes NODATA with an NSEC at the query name
 * whose next name is `\000.<qname>`, its bitmap holding NXNAME.
 */
import { asciiLower, nameKey } from './names.js';
import { nsecRr } from './rdata.js';
import { RCODE, T } from './types.js';
import type { RRset, Zone, ZoneNode } from './zone-view.js';

export type AnswerKind = 'answer' | 'nodata' | 'nxdomain' | 'referral' | 'refused';

export interface Answer {
  rcode: number;
  aa: boolean;
  kind: AnswerKind;
  zone: Zone | null;
  /** Add RRSIGs (signed zone and DO set). */
  dnssec: boolean;
  /** The client set CO: keep the NXDOMAIN rcode alongside the compact denial. */
  compactOk: boolean;
  answer: RRset[];
  authority: RRset[];
  additional: RRset[];
}

const MAX_CHAIN = 8;
/** Order in which ANY picks its one RRset (RFC 8482 §4.2: any one RRset will do). */
const ANY_ORDER = [T.A, T.AAAA, T.CNAME, T.MX, T.TXT, T.SRV, T.CAA, T.PTR, T.NS, T.SOA, T.DNSKEY];

/** Keys of every suffix of a name: keys[i] is the key of labels.slice(i). */
export function suffixKeys(labels: readonly string[]): string[] {
  const keys = new Array<string>(labels.length + 1);
  keys[labels.length] = '';
  for (let i = labels.length - 1; i >= 0; i--) {
    const own = nameKey([labels[i]!]);
    keys[i] = i === labels.length - 1 ? own : `${own}.${keys[i + 1]}`;
  }
  return keys;
}

export class ZoneIndex {
  constructor(readonly zones: ReadonlyMap<string, Zone>) {}

  /**
   * The closest enclosing hosted zone. DS at an apex belongs to the parent side of the cut
   * (RFC 4035 §3.1.4.1): it is answered from a hosted parent that delegates to this zone.
   */
  find(keys: string[], qtype: number): Zone | null {
    for (let i = 0; i < keys.length - 1; i++) {
      const zone = this.zones.get(keys[i]!);
      if (!zone) continue;
      if (i === 0 && qtype === T.DS) {
        const parent = this.find(keys.slice(1), T.A);
        if (parent?.nodes.get(keys[0]!)?.rrsets.has(T.NS)) return parent;
      }
      return zone;
    }
    return null;
  }
}

export function resolve(
  index: ZoneIndex,
  labels: string[],
  qtype: number,
  dnssecOk: boolean,
  compactOk = false,
): Answer {
  const keys = suffixKeys(labels);
  const zone = index.find(keys, qtype);
  const ans: Answer = {
    rcode: RCODE.NOERROR,
    aa: true,
    kind: 'answer',
    zone,
    dnssec: false,
    compactOk,
    answer: [],
    authority: [],
    additional: [],
  };
  if (!zone) {
    ans.rcode = RCODE.REFUSED;
    ans.aa = false;
    ans.kind = 'refused';
    return ans;
  }
  ans.dnssec = dnssecOk && zone.signer !== null;
  lookup(zone, labels, keys, qtype, ans, 0);
  return ans;
}

function lookup(
  zone: Zone,
  labels: string[],
  keys: string[],
  qtype: number,
  ans: Answer,
  depth: number,
): void {
  const apexDepth = zone.apexLabels.length;
  const n = labels.length;
  // Walk down from just below the apex to the query name, stopping at a zone cut.
  for (let i = n - apexDepth - 1; i >= 0; i--) {
    const node = zone.nodes.get(keys[i]!);
    if (!node) {
      wildcardOrNxdomain(zone, labels, keys, i + 1, qtype, ans, depth);
      return;
    }
    if (node.rrsets.has(T.NS) && !(i === 0 && qtype === T.DS)) {
      referral(zone, node, ans);
      return;
    }
  }
  const node = n === apexDepth ? zone.apexNode : zone.nodes.get(keys[0]!)!;
  answerAt(zone, node, labels, qtype, ans, depth, null);
}

/** `wildcardOwner` is set when `node` is a wildcard being expanded for `labels`. */
function answerAt(
  zone: Zone,
  node: ZoneNode,
  labels: string[],
  qtype: number,
  ans: Answer,
  depth: number,
  wildcard: ZoneNode | null,
): void {
  const owned = (set: RRset): RRset => (wildcard ? expand(zone, set, labels) : set);
  if (qtype === T.ANY) {
    for (const type of ANY_ORDER) {
      const set = node.rrsets.get(type);
      if (set) {
        ans.answer.push(owned(set));
        return;
      }
    }
    nodata(zone, node, labels, ans);
    return;
  }
  const set = node.rrsets.get(qtype);
  if (set) {
    ans.answer.push(owned(set));
    addAdditional(zone, set, ans);
    return;
  }
  const cname = node.rrsets.get(T.CNAME);
  if (cname) {
    ans.answer.push(owned(cname));
    const target = (cname.rrs[0]!.segs[0] as { labels: string[] }).labels;
    const targetKeys = suffixKeys(target);
    const inZone = targetKeys[target.length - zone.apexLabels.length] === zone.apexKey;
    if (
      inZone &&
      depth < MAX_CHAIN &&
      !ans.answer.some((s) => s.key === targetKeys[0] && s.type === T.CNAME)
    ) {
      lookup(zone, target, targetKeys, qtype, ans, depth + 1);
    }
    return;
  }
  nodata(zone, node, labels, ans);
}

function wildcardOrNxdomain(
  zone: Zone,
  labels: string[],
  keys: string[],
  encloser: number,
  qtype: number,
  ans: Answer,
  depth: number,
): void {
  const star = zone.nodes.get(`*.${keys[encloser]}`);
  if (star) {
    answerAt(zone, star, labels, qtype, ans, depth, star);
    return;
  }
  ans.kind = 'nxdomain';
  ans.authority.push(zone.negativeSoa);
  if (ans.dnssec) {
    // Black lie: claim the name exists with no data but NSEC and RRSIG; NXNAME says why.
    ans.authority.push(blackLie(zone, labels, [T.RRSIG, T.NSEC, T.NXNAME]));
    if (ans.compactOk) ans.rcode = RCODE.NXDOMAIN;
  } else {
    ans.rcode = RCODE.NXDOMAIN;
  }
}

function nodata(zone: Zone, node: ZoneNode, labels: string[], ans: Answer): void {
  ans.kind = 'nodata';
  ans.authority.push(zone.negativeSoa);
  if (ans.dnssec) ans.authority.push(blackLie(zone, labels, [...node.rrsets.keys(), T.RRSIG, T.NSEC]));
}

function referral(zone: Zone, cut: ZoneNode, ans: Answer): void {
  ans.aa = false;
  ans.kind = 'referral';
  ans.answer.length = 0;
  const ns = cut.rrsets.get(T.NS)!;
  ans.authority.push(ns);
  // An NSEC at the cut without DS proves the delegation insecure (RFC 4035 §3.1.4).
  if (ans.dnssec) ans.authority.push(blackLie(zone, cut.labels, [...cut.rrsets.keys(), T.RRSIG, T.NSEC]));
  addAdditional(zone, ns, ans);
}

/** A/AAAA of in-zone targets of NS, MX and SRV (glue for referrals, help for the others). */
function addAdditional(zone: Zone, set: RRset, ans: Answer): void {
  if (set.type !== T.NS && set.type !== T.MX && set.type !== T.SRV) return;
  for (const rr of set.rrs) {
    const seg = rr.segs[rr.segs.length - 1]!;
    if (Buffer.isBuffer(seg)) continue;
    const node = zone.nodes.get(nameKey(seg.labels));
    if (!node) continue;
    for (const type of [T.A, T.AAAA]) {
      const glue = node.rrsets.get(type);
      if (glue && !ans.additional.includes(glue)) ans.additional.push(glue);
    }
  }
}

function expand(zone: Zone, set: RRset, labels: string[]): RRset {
  const lower = labels.map(asciiLower);
  const key = nameKey(lower);
  // Signed as if the name existed (RFC 9824 §3 allows it of an online signer): no wildcard proof needed.
  return zone.synth(`w|${key}|${set.type}`, () => ({
    labels: lower,
    key,
    type: set.type,
    ttl: set.ttl,
    rrs: set.rrs,
  }));
}

function blackLie(zone: Zone, labels: string[], types: number[]): RRset {
  const lower = labels.map(asciiLower);
  const key = nameKey(lower);
  const sorted = [...new Set(types)].sort((a, b) => a - b);
  return zone.synth(`n|${key}|${sorted.join(',')}`, () => ({
    labels: lower,
    key,
    type: T.NSEC,
    ttl: zone.negativeTtl,
    rrs: [nsecRr(['\u0000', ...lower], sorted)],
  }));
}
