/**
 * Domain names inside the server are arrays of labels (each a latin1 string holding the raw
 * label bytes) plus a lowercase key for lookups. Only ASCII letters fold (RFC 4343): labels may
 * hold any byte, so `String.toLowerCase` (which folds latin1 letters too) is not used.
 */

export function asciiLower(s: string): string {
  return /[A-Z]/.test(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s;
}

/** Lookup key of a name: lowercase labels joined by '.', with '.' and '\' inside labels escaped. */
export function nameKey(labels: readonly string[]): string {
  let key = '';
  for (let i = 0; i < labels.length; i++) {
    let label = asciiLower(labels[i]!);
    if (label.includes('.') || label.includes('\\')) label = label.replace(/[.\\]/g, (c) => `\\${c}`);
    key = i === 0 ? label : `${key}.${label}`;
  }
  return key;
}

/** Splits a control-plane name (`www.example.com`, no escapes, no trailing dot) into labels. */
export function splitName(name: string): string[] {
  const trimmed = name.endsWith('.') ? name.slice(0, -1) : name;
  return trimmed === '' ? [] : trimmed.split('.');
}

/** Wire length of a name written without compression. */
export function wireLength(labels: readonly string[]): number {
  let n = 1;
  for (const l of labels) n += 1 + Buffer.byteLength(l, 'latin1');
  return n;
}

/** Uncompressed, lowercase wire form (RFC 4034 §6.2 canonical form). */
export function canonicalName(labels: readonly string[]): Buffer {
  const out = Buffer.allocUnsafe(wireLength(labels));
  let pos = 0;
  for (const l of labels) {
    const lower = asciiLower(l);
    out[pos++] = lower.length;
    pos += out.write(lower, pos, 'latin1');
  }
  out[pos] = 0;
  return out;
}

/** True when a label is a valid wire label (1..63 bytes). */
export function checkLabels(labels: readonly string[]): boolean {
  return labels.every((l) => l.length > 0 && l.length <= 63) && wireLength(labels) <= 255;
}
