import type { Kysely } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import type { AnyDb } from '../../kernel/store/unit-of-work.js';
import type { LiveEventsTable, LiveTables } from './migrations.js';

/** Queries on live events; `over(tx)` inside a unit of work, `of(store)` for plain reads. */
export class LiveRepo {
  constructor(private readonly db: Kysely<LiveTables>) {}

  static of(store: Store): LiveRepo {
    return new LiveRepo(store.typed<LiveTables>());
  }

  static over(tx: AnyDb): LiveRepo {
    return new LiveRepo(tx);
  }

  async insert(row: LiveEventsTable): Promise<void> {
    await this.db.insertInto('live_events').values(row).execute();
  }

  /** Events that count against the plan's limit: every event not deleted. */
  async countActive(customerId: string): Promise<number> {
    const r = await this.db
      .selectFrom('live_events')
      .select((e) => e.fn.countAll<string | number>().as('n'))
      .where('customer_id', '=', customerId)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** When the customer's first event was created, deleted ones included: the service's activation. */
  async firstCreated(customerId: string): Promise<number | null> {
    const r = await this.db
      .selectFrom('live_events')
      .select((e) => e.fn.min('created_at').as('first'))
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
    return r?.first == null ? null : Number(r.first);
  }

  async slugExists(slug: string): Promise<boolean> {
    const r = await this.db
      .selectFrom('live_events')
      .select('id')
      .where('slug', '=', slug)
      .executeTakeFirst();
    return r !== undefined;
  }

  /** The event behind a public watch address (deleted ones excluded). */
  async bySlug(slug: string): Promise<LiveEventsTable | undefined> {
    return this.db
      .selectFrom('live_events')
      .selectAll()
      .where('slug', '=', slug)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  }

  async get(customerId: string, id: string): Promise<LiveEventsTable | undefined> {
    return this.db
      .selectFrom('live_events')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  }

  async byStreamKeyHash(hash: string): Promise<LiveEventsTable | undefined> {
    return this.db
      .selectFrom('live_events')
      .selectAll()
      .where('stream_key_hash', '=', hash)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  }

  async byId(id: string): Promise<LiveEventsTable | undefined> {
    return this.db.selectFrom('live_events').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async list(
    customerId: string,
    status: string | undefined,
    limit: number,
    offset: number,
  ): Promise<{ rows: LiveEventsTable[]; total: number }> {
    let q = this.db
      .selectFrom('live_events')
      .where('customer_id', '=', customerId)
      .where('deleted_at', 'is', null);
    if (status) q = q.where('status', '=', status);
    const [rows, total] = await Promise.all([
      q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute(),
      q.select((e) => e.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(total.n) };
  }

  async update(id: string, changes: Partial<LiveEventsTable>): Promise<void> {
    await this.db.updateTable('live_events').set(changes).where('id', '=', id).execute();
  }

  /** Forgets every open encoder session (the ingest that had them is gone). */
  async clearSessions(): Promise<void> {
    await this.db
      .updateTable('live_events')
      .set({ ingest_session_id: null, ingest_started_at: null })
      .where('ingest_session_id', 'is not', null)
      .execute();
  }

  /** Events soft-deleted before `before`: the ones to purge for good. */
  async deletedBefore(before: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('live_events')
      .select('id')
      .where('deleted_at', 'is not', null)
      .where('deleted_at', '<', before)
      .execute();
    return rows.map((r) => r.id);
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('live_events').where('id', '=', id).execute();
  }
}
