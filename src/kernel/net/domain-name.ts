import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * A domain as the record stores it: lowercase, punycode (IDNA via WHATWG URL rules), no trailing
 * dot, at least two labels, each a valid LDH label. Null when it is not a domain name.
 */
export function normaliseDomain(input: string): string | null {
  const trimmed = input.trim().replace(/\.$/, '');
  if (trimmed === '' || isIP(trimmed) !== 0 || /[/:@\s]/.test(trimmed)) return null;
  const ascii = domainToASCII(trimmed).toLowerCase();
  if (ascii === '' || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return null;
  // A top-level label is never all digits (RFC 3696 §2).
  if (/^\d+$/.test(labels[labels.length - 1]!)) return null;
  return ascii;
}

/** True when `name` is `apex` or a name below it. */
export function isAtOrBelow(name: string, apex: string): boolean {
  return name === apex || name.endsWith(`.${apex}`);
}
