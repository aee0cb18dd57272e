import { afterPrefix } from './repo.js';

/** A position in key order: past `key` (exclusive) or from it (inclusive), optionally mid-key. */
export interface Seek {
  key: string;
  inclusive: boolean;
  /** Listings of several rows per key (versions, uploads): continue after this row of `key`. */
  tie?: string;
}

export interface ListPage<R> {
  entries: R[];
  prefixes: string[];
  truncated: boolean;
  /** The last key or common prefix returned (NextMarker / continuation). */
  lastKey: string | null;
  last: R | null;
}

/**
 * One page of a listing with prefix and delimiter, read in key order in batches: keys that
 * roll up into a common prefix are skipped with one seek past the prefix, so a page costs a
 * few indexed range reads however many keys the bucket holds.
 */
export async function listPage<R extends { key: string }>(opts: {
  prefix: string;
  delimiter: string;
  maxKeys: number;
  start: Seek | null;
  fetch: (from: Seek | null, limit: number) => Promise<R[]>;
  /** Rows read but not listed (delete markers in an object listing); they do not roll up either. */
  hidden?: (row: R) => boolean;
}): Promise<ListPage<R>> {
  const { prefix, delimiter, maxKeys } = opts;
  const entries: R[] = [];
  const prefixes: string[] = [];
  let from = opts.start;
  let lastKey: string | null = null;
  let last: R | null = null;
  const rollup = (key: string): string | null => {
    if (!delimiter) return null;
    const at = key.indexOf(delimiter, prefix.length);
    return at < 0 ? null : key.slice(0, at + delimiter.length);
  };
  // A marker inside a common prefix means that prefix was already returned.
  if (from && delimiter && from.key.startsWith(prefix)) {
    const cp = rollup(from.key);
    if (cp) from = { key: afterPrefix(cp), inclusive: true };
  }
  if (maxKeys <= 0) return { entries, prefixes, truncated: false, lastKey: null, last: null };
  const batch = Math.min(1000, maxKeys + 1);
  // After a common prefix the next rows are likely more of it: read a few, then seek past it,
  // instead of reading a whole batch of keys that all roll up into the prefix just listed.
  // With a delimiter, start small too: the first keys may all roll up into one prefix.
  let limit = delimiter ? Math.min(batch, 32) : batch;
  for (;;) {
    const rows = await opts.fetch(from, limit);
    let skipTo: string | null = null;
    let current: string | null = null;
    for (const row of rows) {
      if (current !== null && row.key.startsWith(current)) continue;
      if (opts.hidden?.(row)) {
        from = { key: row.key, inclusive: false, ...tieOf(row) };
        current = null;
        continue;
      }
      const cp = rollup(row.key);
      if (entries.length + prefixes.length >= maxKeys)
        return { entries, prefixes, truncated: true, lastKey, last };
      if (cp) {
        prefixes.push(cp);
        lastKey = cp;
        last = null;
        current = cp;
        skipTo = afterPrefix(cp);
        from = { key: skipTo, inclusive: true };
        continue;
      }
      current = null;
      skipTo = null;
      entries.push(row);
      lastKey = row.key;
      last = row;
      from = { key: row.key, inclusive: false, ...tieOf(row) };
    }
    if (rows.length < limit) return { entries, prefixes, truncated: false, lastKey, last };
    limit = skipTo !== null ? 16 : Math.min(batch, limit * 4);
  }
}

// Rows that carry a tie-breaker (version row id, upload id) continue within the same key.
function tieOf(row: { key: string }): { tie?: string } {
  const r = row as { key: string; id?: string; upload_id?: string };
  if (r.upload_id !== undefined) return { tie: r.upload_id };
  if (r.id !== undefined) return { tie: r.id };
  return {};
}
