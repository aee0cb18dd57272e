import { CompiledQuery, type Kysely, PostgresAdapter, type QueryResult } from 'kysely';

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
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  return db.executeQuery<R>(CompiledQuery.raw(pg ? numbered(text) : text, parameters as unknown[]));
}

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

/**
 * Inserts `rows` in one statement with the columns named (in that order; a missing value is
 * NULL). The text is made once per table, columns and row count.
 */
export function insertRows(
  // biome-ignore lint/suspicious/noExplicitAny: any table set; the caller names its columns
  db: Kysely<any>,
  table: string,
  columns: readonly string[],
  rows: readonly object[],
): Promise<QueryResult<never>> {
  const id = `${table}\n${columns.join(',')}\n${rows.length}`;
  let text = insertTexts.get(id);
  if (text === undefined) {
    const row = `(${placeholders(columns.length)})`;
    text = `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES ${Array.from(
      { length: rows.length },
      () => row,
    ).join(', ')}`;
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
