import { CompiledQuery, type Kysely, PostgresAdapter, type QueryResult } from 'kysely';
import { runHeld } from './sqlite-direct.js';

/**
 * Statements on a hot path, as SQL text written once instead of built by Kysely per call: for
 * the small multi-row writes of an S3 PUT burst, building and compiling the query cost more than
 * SQLite's own work. The text uses `?` for every parameter (and never `?` in a literal); on
 * PostgreSQL it becomes `$1, $2, …` once per text.
 */
export function runCompiled<R>(
  // biome-ignore lint/suspicious/noExplicitAny: any table set; the caller names its columns in text
  db: Kysely<any>,
  text: string,
  parameters: readonly unknown[],
): Promise<QueryResult<R>> {
  // Inside a SQLite unit of work: straight to its connection (sqlite-direct.ts).
  try {
    const held = runHeld<R>(db, text, parameters);
    if (held) return Promise.resolve(held);
  } catch (err) {
    return Promise.reject(err);
  }
  return db.executeQuery<R>(
    CompiledQuery.raw(onPostgres(db) ? numbered(text) : text, parameters as unknown[]),
  );
}

/** Whether `db` (or a transaction of it) runs on PostgreSQL, for the few hot paths that differ. */
// biome-ignore lint/suspicious/noExplicitAny: any table set
export const onPostgres = (db: Kysely<any>): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

const numberedTexts = new Map<string, string>();
function numbered(text: string): string {
  let out = numberedTexts.get(text);
  if (out === undefined) {
    let n = 0;
    out = text.replace(/\?/g, () => `$${++n}`);
    if (numberedTexts.size > 1000) numberedTexts.clear();
    numberedTexts.set(text, out);
  }
  return out;
}

/** `?, ?, …` for `count` parameters (an `IN (…)` list), kept per count. */
export function placeholders(count: number): string {
  let out = placeholderLists[count];
  if (out === undefined) {
    out = Array.from({ length: count }, () => '?').join(', ');
    if (count < 1024) placeholderLists[count] = out;
  }
  return out;
}
const placeholderLists: string[] = [];

const insertTexts = new Map<string, string>();

/** What an insert does with a row whose `target` columns match a stored row's: update `set` there. */
export interface OnConflictUpdate {
  target: readonly string[];
  set: readonly string[];
}

/**
 * Inserts `rows` in one statement with the columns named (in that order; a missing value is
 * NULL), or with `onConflict`, updates the stored rows they collide with instead (an upsert, on
 * both engines). The text is made once per table, columns, row count and conflict clause.
 */
export function insertRows(
  // biome-ignore lint/suspicious/noExplicitAny: any table set; the caller names its columns
  db: Kysely<any>,
  table: string,
  columns: readonly string[],
  rows: readonly object[],
  onConflict?: OnConflictUpdate,
): Promise<QueryResult<never>> {
  const conflict = onConflict
    ? ` ON CONFLICT (${onConflict.target.map((c) => `"${c}"`).join(', ')}) DO UPDATE SET ${onConflict.set
        .map((c) => `"${c}" = excluded."${c}"`)
        .join(', ')}`
    : '';
  const id = `${table}\n${columns.join(',')}\n${rows.length}\n${conflict}`;
  let text = insertTexts.get(id);
  if (text === undefined) {
    const row = `(${placeholders(columns.length)})`;
    text = `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES ${Array.from(
      { length: rows.length },
      () => row,
    ).join(', ')}${conflict}`;
    if (insertTexts.size > 1000) insertTexts.clear();
    insertTexts.set(id, text);
  }
  const parameters: unknown[] = [];
  for (const row of rows) {
    const values = row as Record<string, unknown>;
    for (const c of columns) parameters.push(values[c] ?? null);
  }
  return runCompiled(db, text, parameters);
}
