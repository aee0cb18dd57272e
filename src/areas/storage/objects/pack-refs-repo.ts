import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ObjectTables } from './tables.js';

/** A row that names blobs: an object version, or a part of a multipart upload in progress. */
export type BlobRow =
  | { kind: 'object'; id: string; blob: string }
  | { kind: 'part'; uploadId: string; partNumber: number; blob: string; lastModified: number };

const PAGE = 5000;
/** Up to this many packs are looked for by name in SQL; more, and every packed reference is read. */
const NAMED_PACKS = 32;

/**
 * Rows naming at least one packed blob (a packed reference has dots, a file's is a bare id), or,
 * given a few packs, one of theirs: the filter runs in the store, so far fewer rows travel.
 * `'every'`: every row, whatever it names (the orphan sweep).
 */
function naming(packs: string[] | 'every' | undefined): RawBuilder<boolean> {
  if (packs === 'every') return sql<boolean>`1 = 1`;
  if (!packs || packs.length > NAMED_PACKS) return sql<boolean>`blob like '%.%'`;
  return sql<boolean>`(${sql.join(
    packs.map((p) => sql`blob like ${`%${p}.%`}`),
    sql` or `,
  )})`;
}

/**
 * The queries of pack compaction: every row naming blobs, read in pages (as the orphan sweep
 * reads them), and the switch of one row's blobs from old references to new ones, made only if
 * the row still names exactly what was read (a compare-and-swap: a concurrent overwrite or delete
 * wins, and the copy it would have pointed at is just dead).
 */
export class PackRefsRepo {
  constructor(private readonly db: Kysely<ObjectTables>) {}

  /**
   * Every object version's and every uploaded part's blob list that names a packed blob (of one of
   * `packs`, when given: the caller still checks each reference), a page at a time.
   */
  async *rows(packs?: string[] | 'every'): AsyncIterable<BlobRow[]> {
    // Parts first: completing an upload moves its parts' blobs to an object version, which may be
    // a row already paged past (an overwrite in place keeps the row's id). Read in this order, a
    // blob is seen where it was or where it went.
    // Parts exist only while their upload is in progress: few, read at once.
    const parts = await this.db
      .selectFrom('storage_upload_parts')
      .select(['upload_id', 'part_number', 'blob', 'last_modified'])
      .where(naming(packs))
      .execute();
    if (parts.length > 0)
      yield parts.map((p) => ({
        kind: 'part' as const,
        uploadId: p.upload_id,
        partNumber: Number(p.part_number),
        blob: p.blob,
        lastModified: Number(p.last_modified),
      }));
    let after = '';
    for (;;) {
      const page = await this.db
        .selectFrom('storage_objects')
        .select(['id', 'blob'])
        .where('id', '>', after)
        .where(naming(packs))
        .orderBy('id')
        .limit(PAGE)
        .execute();
      if (page.length > 0) yield page.map((r) => ({ kind: 'object' as const, id: r.id, blob: r.blob }));
      if (page.length < PAGE) break;
      after = page[page.length - 1]!.id;
    }
  }

  /** Points a row at `next` if it still names `row.blob`; false when it changed or went meanwhile. */
  async switchBlobs(row: BlobRow, next: string): Promise<boolean> {
    const r =
      row.kind === 'object'
        ? await this.db
            .updateTable('storage_objects')
            .set({ blob: next })
            .where('id', '=', row.id)
            .where('blob', '=', row.blob)
            .executeTakeFirst()
        : await this.db
            .updateTable('storage_upload_parts')
            .set({ blob: next })
            .where('upload_id', '=', row.uploadId)
            .where('part_number', '=', row.partNumber)
            .where('blob', '=', row.blob)
            .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
