import { createReadStream, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';

/** One autonomous system: its registered name and what it announces. */
export interface AsnInfo {
  asn: number;
  name: string;
  prefixes: number;
  /** IPv4 addresses announced (IPv6 space is counted in prefixes only). */
  ipv4_addresses: number;
  ipv6_prefixes: number;
}

interface Family<T extends number | bigint> {
  starts: T[];
  ends: T[];
  asns: number[];
}

/** `a,b,asn,"name, with commas"` → its four fields. */
function parseLine(line: string): [string, string, number, string] | null {
  const first = line.indexOf(',');
  const second = line.indexOf(',', first + 1);
  const third = line.indexOf(',', second + 1);
  if (first < 0 || second < 0 || third < 0) return null;
  let name = line.slice(third + 1);
  if (name.startsWith('"')) name = name.slice(1, name.endsWith('"') ? -1 : undefined).replace(/""/g, '"');
  return [line.slice(0, first), line.slice(first + 1, second), Number(line.slice(second + 1, third)), name];
}

async function readRanges(path: string, onLine: (f: [string, string, number, string]) => void) {
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    const f = parseLine(line);
    if (f) onLine(f);
  }
}

/** Index of the range holding `x` in sorted, non-overlapping ranges, or -1. */
function find<T extends number | bigint>(f: Family<T>, x: T): number {
  let lo = 0;
  let hi = f.starts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (f.starts[mid]! > x) hi = mid - 1;
    else if (f.ends[mid]! < x) lo = mid + 1;
    else return mid;
  }
  return -1;
}

/** The ASN files: an operator's `asn-ipv4-num.csv`/`asn-ipv6-num.csv` in FJORD_IP_DATA_DIR, else the shipped ones. */
function asnFiles(dataDir: string | null) {
  if (dataDir) {
    const v4 = join(dataDir, 'asn-ipv4-num.csv');
    const v6 = join(dataDir, 'asn-ipv6-num.csv');
    if (existsSync(v4) && existsSync(v6)) return { v4, v6 };
  }
  const shipped = dirname(createRequire(import.meta.url).resolve('@ip-location-db/asn/package.json'));
  return { v4: join(shipped, 'asn-ipv4-num.csv'), v6: join(shipped, 'asn-ipv6-num.csv') };
}

/**
 * Address ranges to autonomous systems, from the `@ip-location-db/asn` data (RouteViews and
 * DB-IP, CC BY 4.0): sorted arrays searched by halving, loaded on first use (~0.5 s, ~60 MB).
 */
export class AsnTable {
  private loaded: Promise<{ v4: Family<number>; v6: Family<bigint>; byAsn: Map<number, AsnInfo> }> | null =
    null;

  constructor(private readonly dataDir: string | null) {}

  async lookup(ip: string, version: 4 | 6): Promise<AsnInfo | null> {
    const t = await this.load();
    const i = version === 4 ? find(t.v4, ipv4ToNumber(ip)) : find(t.v6, ipv6ToBigInt(ip));
    if (i < 0) return null;
    return t.byAsn.get((version === 4 ? t.v4 : t.v6).asns[i]!) ?? null;
  }

  async info(asn: number): Promise<AsnInfo | null> {
    return (await this.load()).byAsn.get(asn) ?? null;
  }

  /** Every IPv4 range with its ASN, for summing address space (country densities). */
  async ipv4Ranges(): Promise<Family<number>> {
    return (await this.load()).v4;
  }

  private load() {
    this.loaded ??= this.read();
    this.loaded.catch(() => {
      this.loaded = null;
    });
    return this.loaded;
  }

  private async read() {
    const files = asnFiles(this.dataDir);
    const byAsn = new Map<number, AsnInfo>();
    const info = (asn: number, name: string) => {
      let i = byAsn.get(asn);
      if (!i) {
        i = { asn, name, prefixes: 0, ipv4_addresses: 0, ipv6_prefixes: 0 };
        byAsn.set(asn, i);
      }
      return i;
    };
    const v4: Family<number> = { starts: [], ends: [], asns: [] };
    await readRanges(files.v4, ([a, b, asn, name]) => {
      const start = Number(a);
      const end = Number(b);
      v4.starts.push(start);
      v4.ends.push(end);
      v4.asns.push(asn);
      const i = info(asn, name);
      i.prefixes++;
      i.ipv4_addresses += end - start + 1;
    });
    const v6: Family<bigint> = { starts: [], ends: [], asns: [] };
    await readRanges(files.v6, ([a, b, asn, name]) => {
      v6.starts.push(BigInt(a));
      v6.ends.push(BigInt(b));
      v6.asns.push(asn);
      const i = info(asn, name);
      i.prefixes++;
      i.ipv6_prefixes++;
    });
    return { v4, v6, byAsn };
  }
}

export function ipv4ToNumber(ip: string): number {
  const p = ip.split('.').map(Number);
  return ((p[0]! << 24) >>> 0) + (p[1]! << 16) + (p[2]! << 8) + p[3]!;
}

export function ipv6ToBigInt(ip: string): bigint {
  // Expand `::` and an embedded IPv4 tail into eight 16-bit groups.
  let text = ip;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = ipv4ToNumber(v4[1]!);
    text = `${text.slice(0, -v4[1]!.length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((acc, g) => (acc << 16n) + BigInt(Number.parseInt(g || '0', 16)), 0n);
}
