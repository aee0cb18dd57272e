/**
 * The seam between the DNS control plane (zones, records, DNSSEC keys, statistics —
 * `service.ts`) and the authoritative server (`server/`). The server keeps an in-memory view
 * built from `ZoneSource` and follows its change feed; it reports query counts through
 * `QueryStatsSink`. Dynamic DNS and domain verification write records through the control
 * plane's service, so the server sees their changes the same way.
 */

/** Record data in presentation-independent form, one entry per resource record. */
export type RecordData =
  | { type: 'A'; address: string }
  | { type: 'AAAA'; address: string }
  | { type: 'CNAME'; target: string }
  | { type: 'NS'; target: string }
  | { type: 'PTR'; target: string }
  | { type: 'MX'; preference: number; exchange: string }
  | { type: 'TXT'; strings: string[] } // each string ≤ 255 bytes (already split)
  | { type: 'SRV'; priority: number; weight: number; port: number; target: string }
  | { type: 'CAA'; flags: number; tag: string; value: string };

export interface ServedRecord {
  /** Absolute owner name, lowercase, no trailing dot (e.g. `www.example.com`, `*.example.com`). */
  name: string;
  ttl: number;
  data: RecordData;
}

export interface SoaFields {
  mname: string;
  rname: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  /** Negative-caching TTL (RFC 2308): the SOA's own TTL and MINIMUM field. */
  minimum: number;
  ttl: number;
}

export interface ZoneSigningKey {
  algorithm: 13;
  flags: 257 | 256;
  keyTag: number;
  /** Raw public key (64 bytes, X‖Y) as it appears in the DNSKEY RDATA. */
  publicKey: Buffer;
  /** PKCS#8 DER of the P-256 private key, decrypted. */
  privateKeyPkcs8: Buffer;
}

export interface ZoneSnapshot {
  zoneId: string;
  customerId: string;
  /** Apex, lowercase, no trailing dot. */
  apex: string;
  status: 'pending' | 'active' | 'disabled';
  nameservers: string[];
  soa: SoaFields;
  records: ServedRecord[];
  /** Present when DNSSEC is enabled. */
  signingKey: ZoneSigningKey | null;
}

/** TSIG algorithms the server signs and verifies with (RFC 8945 §6). */
export const TSIG_ALGORITHM_NAMES = [
  'hmac-sha256',
  'hmac-sha1',
  'hmac-sha224',
  'hmac-sha384',
  'hmac-sha512',
] as const;
export type TsigAlgorithmName = (typeof TSIG_ALGORITHM_NAMES)[number];

/** A TSIG key as the server uses it: for signed queries, transfers and NOTIFY. */
export interface ServedTsigKey {
  /** Lowercase, no trailing dot. */
  name: string;
  algorithm: TsigAlgorithmName;
  secret: Buffer;
  /** Apexes (lowercase) the key may transfer; null for every zone. */
  zones: string[] | null;
  /** Secondaries (`host:port`) that get NOTIFY signed with this key for the zones it covers. */
  notify: string[];
}

export interface ZoneSource {
  /** The TSIG keys, loaded with every full reload ('*'). */
  loadTsigKeys(): Promise<ServedTsigKey[]>;
  /** Every zone that should be served (disabled ones excluded). */
  loadAll(): Promise<ZoneSnapshot[]>;
  loadZone(apex: string): Promise<ZoneSnapshot | null>;
  /**
   * Calls back with a zone's apex whenever it (or any record in it) changes in any process,
   * and with '*' when everything must be reloaded (e.g. after a lost notification channel).
   */
  onZoneChanged(listener: (apex: string) => void): () => void;
}

export interface QueryStatsSink {
  /** Called off the answer path, in batches: counts per zone, per record type, with total response time. */
  recordQueries(
    batch: { zoneId: string; qtype: string; count: number; totalMicros: number; at: number }[],
  ): Promise<void>;
}
