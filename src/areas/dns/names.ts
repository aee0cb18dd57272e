import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

/**
 * Domain names as Fjord stores them: lowercase ASCII (IDNs in punycode), no trailing dot.
 * Zone apexes and target host names follow the host-name rules (letters, digits, hyphens; RFC
 * 1123), owner names and targets may also carry underscores (`_dmarc`, `_sip._tcp`, DKIM
 * selectors), and an owner may start with the wildcard label `*` (RFC 4592).
 */
export class NameError extends Error {}

const HOST_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const SERVICE_LABEL = /^(?:_?[a-z0-9]([a-z0-9_-]{0,61}[a-z0-9])?|_[a-z0-9])$/;
const MAX_NAME = 253;

/** Normalises an IDN or ASCII name to lowercase ASCII without the trailing dot, or ''. */
export function toAscii(name: string): string {
  const trimmed = name.trim().replace(/\.$/, '');
  if (trimmed === '' || /\s/.test(trimmed) || trimmed.includes('..')) return '';
  // domainToASCII maps Unicode labels to punycode; it does not judge underscores or length.
  const ascii = /^[\x21-\x7e]+$/.test(trimmed) ? trimmed : domainToASCII(trimmed);
  return ascii.toLowerCase();
}

/** A zone apex: at least two labels, host-name syntax, not an address. */
export function normaliseZoneName(input: string): string {
  const name = toAscii(input);
  if (!name) throw new NameError('not a valid domain name');
  if (isIP(name)) throw new NameError('an IP address is not a domain name');
  if (name.length > MAX_NAME) throw new NameError('longer than 253 characters');
  const labels = name.split('.');
  if (labels.length < 2) throw new NameError('a zone needs at least two labels (e.g. example.com)');
  for (const l of labels) {
    if (!HOST_LABEL.test(l)) throw new NameError(`label "${l}" is not a valid host-name label`);
  }
  if (/^\d+$/.test(labels[labels.length - 1]!)) throw new NameError('the top-level label cannot be numeric');
  return name;
}

function checkLabels(labels: string[], allowWildcard: boolean): void {
  labels.forEach((l, i) => {
    if (l === '*' && allowWildcard && i === 0) return;
    if (l === '*') throw new NameError('the wildcard `*` may only be the leftmost label');
    if (l.length > 63) throw new NameError(`label "${l}" is longer than 63 characters`);
    if (!SERVICE_LABEL.test(l)) throw new NameError(`label "${l}" is not valid (letters, digits, - and _)`);
  });
}

/**
 * A record's `host`, relative to the zone. `@` (or the apex itself) is the apex; a name ending in
 * `.` must lie inside the zone; a name that ends with `.<apex>` is taken as absolute; anything
 * else is relative (`www`, `*.dev`, `_sip._tcp`). Returns the relative form (`@` for the apex).
 */
export function normaliseHost(input: string, apex: string): string {
  const raw = input.trim();
  if (raw === '@' || raw === '') {
    if (raw === '') throw new NameError('host is empty (use @ for the zone apex)');
    return '@';
  }
  const absolute = raw.endsWith('.');
  const name = raw === '*' ? '*' : toAscii(raw.startsWith('*.') ? raw.slice(2) : raw);
  if (!name) throw new NameError('not a valid host name');
  const full = raw.startsWith('*.') ? `*.${name}` : name;
  let relative: string;
  if (full === apex) relative = '@';
  else if (full.endsWith(`.${apex}`)) relative = full.slice(0, -(apex.length + 1));
  else if (absolute) throw new NameError(`${raw} is not inside the zone ${apex}`);
  else relative = full;
  if (relative === '@') return relative;
  if (relative.length + apex.length + 1 > MAX_NAME)
    throw new NameError('the full name is longer than 253 characters');
  checkLabels(relative.split('.'), true);
  return relative;
}

/** The absolute owner name of a relative host. */
export const absoluteName = (host: string, apex: string): string => (host === '@' ? apex : `${host}.${apex}`);

/**
 * A target name (CNAME, NS, PTR, MX exchange, SRV target): `@` is the apex, a single label is
 * relative to the zone (`mail` → `mail.<apex>`), a name with dots is absolute (trailing dot
 * optional). Returned absolute, lowercase, without the trailing dot.
 */
export function normaliseTarget(input: string, apex: string): string {
  const raw = input.trim();
  if (raw === '@') return apex;
  const name = toAscii(raw);
  if (!name) throw new NameError(`"${input}" is not a valid host name`);
  if (isIP(name)) throw new NameError('a target must be a host name, not an IP address');
  const full = name.includes('.') || raw.endsWith('.') ? name : `${name}.${apex}`;
  if (full.length > MAX_NAME) throw new NameError('longer than 253 characters');
  checkLabels(full.split('.'), false);
  return full;
}
