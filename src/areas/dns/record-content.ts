import { isIPv4, isIPv6 } from 'node:net';
import { NameError, normaliseTarget } from './names.js';
import type { RecordData } from './server-contract.js';

export const RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'SRV', 'CAA', 'PTR'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

/** Types whose `priority` field carries the MX preference or SRV priority. */
export const PRIORITY_TYPES: readonly string[] = ['MX', 'SRV'];

/** Largest TXT value accepted: many 255-byte strings, well inside a 64 KiB RDATA. */
export const MAX_TXT_BYTES = 4000;

export class ContentError extends Error {
  constructor(
    readonly field: 'record' | 'priority',
    message: string,
  ) {
    super(message);
  }
}

const bad = (message: string) => new ContentError('record', message);

/** `::FFFF:0:1` → `::ffff:0:1`: the compressed, lowercase form (RFC 5952) that URL parsing yields. */
function canonicalIpv6(address: string): string {
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

function target(value: string, apex: string, what: string): string {
  try {
    return normaliseTarget(value, apex);
  } catch (err) {
    if (err instanceof NameError) throw bad(`${what}: ${err.message}`);
    throw err;
  }
}

function u16(value: string, what: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw bad(`${what} must be an integer 0-65535`);
  return Number(value);
}

/** Parses a sequence of DNS quoted strings (`"a" "b\"c"`, RFC 1035 §5.1 escapes); null if it is not one. */
export function parseQuotedStrings(text: string): string[] | null {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    while (text[i] === ' ' || text[i] === '\t') i++;
    if (i >= text.length) break;
    if (text[i] !== '"') return null;
    i++;
    const bytes: number[] = [];
    let closed = false;
    while (i < text.length) {
      const c = text[i]!;
      if (c === '"') {
        closed = true;
        i++;
        break;
      }
      if (c === '\\') {
        const digits = /^\d{3}/.exec(text.slice(i + 1));
        if (digits) {
          const n = Number(digits[0]);
          if (n > 255) return null;
          bytes.push(n);
          i += 4;
        } else if (i + 1 < text.length) {
          bytes.push(...Buffer.from(text[i + 1]!, 'utf8'));
          i += 2;
        } else return null;
        continue;
      }
      const cp = text.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      bytes.push(...Buffer.from(ch, 'utf8'));
      i += ch.length;
    }
    if (!closed) return null;
    out.push(Buffer.from(bytes).toString('utf8'));
  }
  return out.length > 0 ? out : null;
}

/** Splits text into strings of at most 255 UTF-8 bytes without cutting a character. */
export function splitTxt(text: string): string[] {
  if (text === '') return [''];
  const out: string[] = [];
  let current = '';
  let size = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch);
    if (size + n > 255) {
      out.push(current);
      current = '';
      size = 0;
    }
    current += ch;
    size += n;
  }
  out.push(current);
  return out;
}

/** The character strings of a stored TXT value: quoted form as written, plain text split. */
export function txtStrings(content: string): string[] {
  const quoted = content.startsWith('"') ? parseQuotedStrings(content) : null;
  return (quoted ?? [content]).flatMap(splitTxt);
}

/** One DNS character string in presentation form, quoted, with `"`, `\` and controls escaped. */
export function quoteString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (code < 0x20 || code === 0x7f) out += `\\${String(code).padStart(3, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Control characters (C0 and DEL), optionally allowing tab. */
function hasControl(s: string, allowTab: boolean): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 && !(allowTab && c === 0x09)) || c === 0x7f) return true;
  }
  return false;
}

function canonicalTxt(value: string): string {
  if (hasControl(value, true)) throw bad('TXT text must not contain control characters');
  const quoted = value.startsWith('"') ? parseQuotedStrings(value) : null;
  const bytes = quoted ? quoted.reduce((n, s) => n + Buffer.byteLength(s), 0) : Buffer.byteLength(value);
  if (bytes > MAX_TXT_BYTES) throw bad(`TXT text is longer than ${MAX_TXT_BYTES} bytes`);
  if (!quoted) return value;
  // Strings that are just a plain text as Fjord would split it are stored as that text, so a
  // zone file exported and imported again gives the same `content`.
  const joined = quoted.join('');
  const same = splitTxt(joined);
  if (!joined.startsWith('"') && same.length === quoted.length && same.every((x, i) => x === quoted[i]))
    return joined;
  return quoted.map(quoteString).join(' ');
}

const CAA_TAG = /^[a-z0-9]{1,15}$/i;

function canonicalCaa(value: string, apex: string): string {
  const m = /^(\d{1,3})\s+([A-Za-z0-9]+)\s+(.*)$/s.exec(value.trim());
  if (!m) throw bad('CAA value must be `<flags> <tag> <value>`, e.g. 0 issue "letsencrypt.org"');
  const flags = Number(m[1]);
  if (flags > 255) throw bad('CAA flags must be 0-255');
  if (!CAA_TAG.test(m[2]!)) throw bad('CAA tag must be 1-15 letters or digits');
  const tag = m[2]!.toLowerCase();
  const rawValue = m[3]!.trim();
  const parsed = rawValue.startsWith('"') ? parseQuotedStrings(rawValue) : [rawValue];
  if (!parsed || parsed.length !== 1) throw bad('CAA value must be a single (quoted) string');
  const v = parsed[0]!;
  if (hasControl(v, false)) throw bad('CAA value must not contain control characters');
  if (tag === 'issue' || tag === 'issuewild') {
    // RFC 8659 §4.2: an optional issuer domain, then `; key=value` parameters.
    const [domain = '', ...params] = v.split(';');
    if (domain.trim() !== '')
      target(domain.trim().endsWith('.') ? domain.trim() : `${domain.trim()}.`, apex, 'CAA issuer');
    for (const p of params) {
      if (p.trim() !== '' && !/^\s*[A-Za-z0-9]+\s*=\s*[\x21-\x3a\x3c-\x7e]*\s*$/.test(p)) {
        throw bad(`CAA parameter "${p.trim()}" is not key=value`);
      }
    }
  } else if (tag === 'iodef') {
    if (!/^(mailto:[^@\s]+@[^@\s]+|https?:\/\/\S+)$/i.test(v))
      throw bad('CAA iodef must be a mailto: or http(s) URL');
  }
  return `${flags} ${tag} ${quoteString(v)}`;
}

/**
 * Validates a record's value for its type and returns its canonical stored form (see
 * docs/dns.md): addresses normalised, names absolute without the trailing dot, SRV as
 * `weight port target`, CAA as `flags tag "value"`. `priority` is checked for MX and SRV and must
 * be absent for the other types. A four-field SRV value (`priority weight port target`) is
 * accepted when no priority is given.
 */
export function canonicalContent(
  type: RecordType,
  value: string,
  priority: number | null | undefined,
  apex: string,
): { content: string; priority: number | null } {
  const v = value.trim();
  if (v === '' && type !== 'TXT') throw bad('record must not be empty');
  const needPriority = (p: number | null | undefined): number => {
    if (p === null || p === undefined)
      throw new ContentError('priority', `priority is required for ${type} records`);
    if (!Number.isInteger(p) || p < 0 || p > 65535)
      throw new ContentError('priority', 'priority must be 0-65535');
    return p;
  };
  if (!PRIORITY_TYPES.includes(type) && priority !== null && priority !== undefined) {
    throw new ContentError('priority', `priority applies only to MX and SRV records, not ${type}`);
  }
  switch (type) {
    case 'A':
      if (!isIPv4(v)) throw bad(`"${v}" is not an IPv4 address`);
      return { content: v, priority: null };
    case 'AAAA':
      if (!isIPv6(v) || v.includes('%')) throw bad(`"${v}" is not an IPv6 address`);
      return { content: canonicalIpv6(v), priority: null };
    case 'CNAME':
      return { content: target(v, apex, 'CNAME target'), priority: null };
    case 'NS':
      return { content: target(v, apex, 'nameserver'), priority: null };
    case 'PTR':
      return { content: target(v, apex, 'PTR target'), priority: null };
    case 'MX': {
      const p = needPriority(priority);
      // RFC 7505 null MX: "." with preference 0 says the domain accepts no mail.
      if (v === '.') {
        if (p !== 0) throw new ContentError('priority', 'a null MX (".") must have priority 0');
        return { content: '.', priority: 0 };
      }
      return { content: target(v, apex, 'mail exchanger'), priority: p };
    }
    case 'SRV': {
      const parts = v.split(/\s+/);
      if (parts.length === 4 && (priority === null || priority === undefined)) {
        priority = u16(parts.shift()!, 'SRV priority');
      }
      if (parts.length !== 3) throw bad('SRV value must be `weight port target` (priority in `priority`)');
      const p = needPriority(priority);
      const weight = u16(parts[0]!, 'SRV weight');
      const port = u16(parts[1]!, 'SRV port');
      const host = parts[2] === '.' ? '.' : target(parts[2]!, apex, 'SRV target');
      return { content: `${weight} ${port} ${host}`, priority: p };
    }
    case 'TXT':
      return { content: canonicalTxt(value), priority: null };
    case 'CAA':
      return { content: canonicalCaa(v, apex), priority: null };
  }
}

/** A stored record's data as the server serves it. */
export function recordData(type: string, content: string, priority: number | null): RecordData {
  switch (type) {
    case 'A':
      return { type: 'A', address: content };
    case 'AAAA':
      return { type: 'AAAA', address: content };
    case 'CNAME':
    case 'NS':
    case 'PTR':
      return { type, target: content };
    case 'MX':
      return { type: 'MX', preference: priority ?? 0, exchange: content === '.' ? '' : content };
    case 'SRV': {
      const [weight, port, host] = content.split(' ');
      return {
        type: 'SRV',
        priority: priority ?? 0,
        weight: Number(weight),
        port: Number(port),
        target: host === '.' ? '' : host!,
      };
    }
    case 'TXT':
      return { type: 'TXT', strings: txtStrings(content) };
    case 'CAA': {
      const m = /^(\d+) (\S+) (.*)$/s.exec(content)!;
      return { type: 'CAA', flags: Number(m[1]), tag: m[2]!, value: parseQuotedStrings(m[3]!)?.[0] ?? '' };
    }
    default:
      throw new Error(`unknown stored record type ${type}`);
  }
}

/** The RDATA of a stored record in zone-file presentation form. */
export function presentation(type: string, content: string, priority: number | null): string {
  const fq = (n: string) => (n === '.' ? '.' : `${n}.`);
  switch (type) {
    case 'CNAME':
    case 'NS':
    case 'PTR':
      return fq(content);
    case 'MX':
      return `${priority ?? 0} ${fq(content)}`;
    case 'SRV': {
      const [weight, port, host] = content.split(' ');
      return `${priority ?? 0} ${weight} ${port} ${fq(host!)}`;
    }
    case 'TXT':
      return txtStrings(content).map(quoteString).join(' ');
    default:
      return content;
  }
}
