import { NameError, normaliseHost, toAscii } from './names.js';
import { presentation, quoteString, RECORD_TYPES, type RecordType } from './record-content.js';
import type { SoaFields } from './server-contract.js';

/**
 * BIND zone files (RFC 1035 §5): reading them into record changes for import, and writing a
 * zone out. The reader understands `$ORIGIN`, `$TTL`, `@`, relative and absolute names, an
 * omitted owner (the previous one), TTL and class in either order, TTL units (`1h30m`),
 * parentheses across lines, `;` comments and quoted strings with escapes. Records Fjord keeps
 * itself — the SOA, the apex NS set and DNSSEC records — are skipped and reported.
 */
export class ZoneFileError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
  }
}

export interface ParsedRecord {
  line: number;
  /** Relative to the zone: `@`, `www`, `*.dev`. */
  host: string;
  type: RecordType;
  /** Value in the API's form, names absolute with a trailing dot. */
  record: string;
  ttl: number | null;
  priority: number | null;
}

export interface SkippedRecord {
  line: number;
  type: string;
  reason: string;
}

const MANAGED_DNSSEC = new Set(['DNSKEY', 'RRSIG', 'NSEC', 'NSEC3', 'NSEC3PARAM', 'DS', 'CDS', 'CDNSKEY']);
const CLASSES = new Set(['IN', 'CH', 'HS', 'CS']);

interface Line {
  line: number;
  /** Whether the line began with blank space: the owner is the previous one. */
  continued: boolean;
  tokens: string[];
}

/** Splits text into logical lines of tokens; quoted strings keep their quotes. */
function tokenize(text: string): Line[] {
  const lines: Line[] = [];
  let current: Line | null = null;
  let depth = 0;
  let lineNo = 1;
  let i = 0;
  let atLineStart = true;
  const flush = () => {
    if (current && current.tokens.length > 0) lines.push(current);
    current = null;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\n') {
      lineNo++;
      i++;
      if (depth === 0) {
        flush();
        atLineStart = true;
      }
      continue;
    }
    if (atLineStart && depth === 0) {
      current = { line: lineNo, continued: c === ' ' || c === '\t', tokens: [] };
      atLineStart = false;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
    } else if (c === ';') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '(') {
      depth++;
      i++;
    } else if (c === ')') {
      if (depth === 0) throw new ZoneFileError(lineNo, 'unbalanced ")"');
      depth--;
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') {
        if (text[j] === '\\') j++;
        if (text[j] === '\n') throw new ZoneFileError(lineNo, 'unterminated quoted string');
        j++;
      }
      if (j >= text.length) throw new ZoneFileError(lineNo, 'unterminated quoted string');
      current!.tokens.push(text.slice(i, j + 1));
      i = j + 1;
    } else {
      let j = i;
      while (j < text.length && !' \t\r\n;()"'.includes(text[j]!)) {
        if (text[j] === '\\') j++;
        j++;
      }
      current!.tokens.push(text.slice(i, j));
      i = j;
    }
  }
  if (depth !== 0) throw new ZoneFileError(lineNo, 'unbalanced "("');
  flush();
  return lines;
}

const TTL_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

/** `3600`, `1h`, `1h30m` → seconds; null when the token is not a TTL. */
export function parseTtl(token: string): number | null {
  if (/^\d+$/.test(token)) return Number(token);
  if (!/^(\d+[smhdw])+$/i.test(token)) return null;
  let total = 0;
  for (const m of token.toLowerCase().matchAll(/(\d+)([smhdw])/g)) total += Number(m[1]) * TTL_UNITS[m[2]!]!;
  return total;
}

export function parseZoneFile(
  text: string,
  apex: string,
): { records: ParsedRecord[]; skipped: SkippedRecord[] } {
  let origin = apex;
  let defaultTtl: number | null = null;
  let previousOwner: string | null = null;
  let previousTtl: number | null = null;
  const records: ParsedRecord[] = [];
  const skipped: SkippedRecord[] = [];

  const absolute = (name: string, line: number): string => {
    if (name === '@') return origin;
    const isAbsolute = name.endsWith('.');
    const wildcard = name === '*' || name.startsWith('*.');
    const body = name === '*' ? '' : wildcard ? name.slice(2) : name;
    const ascii = body === '' ? '' : toAscii(body);
    if (body !== '' && !ascii) throw new ZoneFileError(line, `"${name}" is not a valid name`);
    const joined = wildcard ? (ascii ? `*.${ascii}` : '*') : ascii;
    return isAbsolute ? joined : `${joined}.${origin}`;
  };

  for (const { line, continued, tokens } of tokenize(text)) {
    const first = tokens[0]!;
    if (first.startsWith('$')) {
      const directive = first.toUpperCase();
      if (directive === '$ORIGIN') {
        if (!tokens[1]) throw new ZoneFileError(line, '$ORIGIN needs a name');
        origin = absolute(tokens[1].endsWith('.') ? tokens[1] : `${tokens[1]}.`, line);
      } else if (directive === '$TTL') {
        const ttl = tokens[1] ? parseTtl(tokens[1]) : null;
        if (ttl === null) throw new ZoneFileError(line, '$TTL needs a TTL');
        defaultTtl = ttl;
      } else {
        throw new ZoneFileError(line, `${first} is not supported (only $ORIGIN and $TTL)`);
      }
      continue;
    }
    let rest = tokens;
    let owner: string;
    if (continued) {
      if (previousOwner === null) throw new ZoneFileError(line, 'the first record needs an owner name');
      owner = previousOwner;
    } else {
      owner = absolute(first, line);
      rest = tokens.slice(1);
    }
    previousOwner = owner;
    let ttl: number | null = null;
    while (rest.length > 0) {
      const t = rest[0]!;
      const asTtl = parseTtl(t);
      if (asTtl !== null && ttl === null) ttl = asTtl;
      else if (CLASSES.has(t.toUpperCase())) {
        if (t.toUpperCase() !== 'IN') throw new ZoneFileError(line, `class ${t} is not supported (only IN)`);
      } else break;
      rest = rest.slice(1);
    }
    const type = rest[0]?.toUpperCase();
    if (!type) throw new ZoneFileError(line, 'record type missing');
    const rdata = rest.slice(1);
    // RFC 2308: a record without a TTL takes $TTL, else the previous record's TTL.
    const effectiveTtl: number | null = ttl ?? defaultTtl ?? previousTtl;
    previousTtl = effectiveTtl;
    if (type === 'SOA') {
      skipped.push({ line, type, reason: 'the SOA is kept by Fjord' });
      continue;
    }
    if (MANAGED_DNSSEC.has(type)) {
      skipped.push({ line, type, reason: 'DNSSEC records are made by Fjord' });
      continue;
    }
    if (!(RECORD_TYPES as readonly string[]).includes(type)) {
      throw new ZoneFileError(line, `record type ${type} is not supported`);
    }
    if (type === 'NS' && owner === apex) {
      skipped.push({ line, type, reason: "the apex NS records are Fjord's nameservers" });
      continue;
    }
    let host: string;
    try {
      host = normaliseHost(`${owner}.`, apex);
    } catch (err) {
      if (err instanceof NameError) throw new ZoneFileError(line, err.message);
      throw err;
    }
    const need = (n: number) => {
      if (rdata.length !== n)
        throw new ZoneFileError(line, `${type} needs ${n} field(s), got ${rdata.length}`);
    };
    const name = (t: string) => (t === '.' ? '.' : `${absolute(t, line)}.`);
    const num = (t: string) => {
      if (!/^\d+$/.test(t)) throw new ZoneFileError(line, `"${t}" is not a number`);
      return Number(t);
    };
    let record: string;
    let priority: number | null = null;
    switch (type as RecordType) {
      case 'A':
      case 'AAAA':
        need(1);
        record = rdata[0]!;
        break;
      case 'CNAME':
      case 'NS':
      case 'PTR':
        need(1);
        record = name(rdata[0]!);
        break;
      case 'MX':
        need(2);
        priority = num(rdata[0]!);
        record = name(rdata[1]!);
        break;
      case 'SRV':
        need(4);
        priority = num(rdata[0]!);
        record = `${num(rdata[1]!)} ${num(rdata[2]!)} ${name(rdata[3]!)}`;
        break;
      case 'TXT':
        if (rdata.length === 0) throw new ZoneFileError(line, 'TXT needs at least one string');
        record = rdata.map((t) => (t.startsWith('"') ? t : quoteString(t))).join(' ');
        break;
      case 'CAA':
        need(3);
        record = `${rdata[0]} ${rdata[1]} ${rdata[2]}`;
        break;
    }
    records.push({ line, host, type: type as RecordType, record, ttl: effectiveTtl, priority });
  }
  return { records, skipped };
}

export interface ExportRecord {
  name: string;
  type: string;
  content: string;
  ttl: number;
  priority: number | null;
}

/** The zone as a BIND zone file: SOA and apex NS first, then the records by owner and type. */
export function writeZoneFile(
  apex: string,
  soa: SoaFields,
  nameservers: string[],
  nsTtl: number,
  records: ExportRecord[],
): string {
  const out = [
    `; Zone ${apex}, exported by Fjord. Serial ${soa.serial}.`,
    `$ORIGIN ${apex}.`,
    `$TTL ${soa.ttl}`,
    `@\t${soa.ttl}\tIN\tSOA\t${soa.mname}. ${soa.rname}. ${soa.serial} ${soa.refresh} ${soa.retry} ${soa.expire} ${soa.minimum}`,
    ...nameservers.map((ns) => `@\t${nsTtl}\tIN\tNS\t${ns}.`),
  ];
  for (const r of records) {
    out.push(`${r.name}\t${r.ttl}\tIN\t${r.type}\t${presentation(r.type, r.content, r.priority)}`);
  }
  return `${out.join('\n')}\n`;
}
