/** DNS numbers used by the server (RFC 1035, 3596, 2782, 4034, 6891, 8659, 9824). */
export const T = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  PTR: 12,
  MX: 15,
  TXT: 16,
  AAAA: 28,
  SRV: 33,
  OPT: 41,
  DS: 43,
  RRSIG: 46,
  NSEC: 47,
  DNSKEY: 48,
  NXNAME: 128,
  TSIG: 250,
  IXFR: 251,
  AXFR: 252,
  ANY: 255,
  CAA: 257,
} as const;

export const RCODE = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  NOTAUTH: 9,
} as const;
/** The TSIG record's own error field (RFC 8945 §3). */
export const TSIG_ERROR = { BADSIG: 16, BADKEY: 17, BADTIME: 18 } as const;
export const OPCODE = { QUERY: 0, NOTIFY: 4 } as const;
export const CLASS_IN = 1;

const NAMES: Record<number, string> = Object.fromEntries(Object.entries(T).map(([k, v]) => [v, k]));

/** `A`, `AAAA`, … or `TYPE123` (RFC 3597) for the statistics. */
export function typeName(type: number): string {
  return NAMES[type] ?? `TYPE${type}`;
}

/** Record types the control plane stores, by their mnemonic. */
export const RECORD_TYPES: Record<string, number> = {
  A: T.A,
  AAAA: T.AAAA,
  CNAME: T.CNAME,
  NS: T.NS,
  PTR: T.PTR,
  MX: T.MX,
  TXT: T.TXT,
  SRV: T.SRV,
  CAA: T.CAA,
};
