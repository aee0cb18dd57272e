import type { Kysely } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import type { AnyDb } from '../../kernel/store/unit-of-work.js';
import type {
  LiveAccessFailuresTable,
  LiveAccessGrantsTable,
  LiveTables,
  LiveWatchTokensTable,
} from './migrations.js';

/** Queries on watch tokens, access grants and failed attempts. */
export class AccessRepo {
  constructor(private readonly db: Kysely<LiveTables>) {}

  static of(store: Store): AccessRepo {
    return new AccessRepo(store.typed<LiveTables>());
  }

  static over(tx: AnyDb): AccessRepo {
    return new AccessRepo(tx);
  }

  async insertToken(row: LiveWatchTokensTable): Promise<void> {
    await this.db.insertInto('live_watch_tokens').values(row).execute();
  }

  async countTokens(eventId: string): Promise<number> {
    const r = await this.db
      .selectFrom('live_watch_tokens')
      .select((e) => e.fn.countAll<string | number>().as('n'))
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async listTokens(
    eventId: string,
    limit: number,
    offset: number,
  ): Promise<{ rows: LiveWatchTokensTable[]; total: number }> {
    const q = this.db.selectFrom('live_watch_tokens').where('event_id', '=', eventId);
    const [rows, total] = await Promise.all([
      q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute(),
      q.select((e) => e.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(total.n) };
  }

  async tokenByHash(hash: string): Promise<LiveWatchTokensTable | undefined> {
    return this.db
      .selectFrom('live_watch_tokens')
      .selectAll()
      .where('token_hash', '=', hash)
      .executeTakeFirst();
  }

  async tokenById(id: string): Promise<LiveWatchTokensTable | undefined> {
    return this.db.selectFrom('live_watch_tokens').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async useToken(id: string, at: number): Promise<void> {
    await this.db
      .updateTable('live_watch_tokens')
      .set((e) => ({ use_count: e('use_count', '+', 1), last_used_at: at }))
      .where('id', '=', id)
      .execute();
  }

  async insertGrant(row: LiveAccessGrantsTable): Promise<void> {
    await this.db.insertInto('live_access_grants').values(row).execute();
  }

  async grantByHash(hash: string): Promise<LiveAccessGrantsTable | undefined> {
    return this.db
      .selectFrom('live_access_grants')
      .selectAll()
      .where('grant_hash', '=', hash)
      .executeTakeFirst();
  }

  async consumeGrant(id: string, at: number, playbackUntil: number): Promise<void> {
    await this.db
      .updateTable('live_access_grants')
      .set({ consumed_at: at, playback_until: playbackUntil })
      .where('id', '=', id)
      .execute();
  }

  async insertFailure(row: LiveAccessFailuresTable): Promise<void> {
    await this.db.insertInto('live_access_failures').values(row).execute();
  }

  async deleteFailure(id: string): Promise<void> {
    await this.db.deleteFrom('live_access_failures').where('id', '=', id).execute();
  }

  /** A client's failed attempts on an event since `since`, oldest first. */
  async failuresSince(eventId: string, client: string, since: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('live_access_failures')
      .select('at')
      .where('event_id', '=', eventId)
      .where('client', '=', client)
      .where('at', '>=', since)
      .orderBy('at')
      .execute();
    return rows.map((r) => Number(r.at));
  }

  /** Forgets failures and grants past any use (the purge job). */
  async forgetOld(before: number): Promise<void> {
    await this.db.deleteFrom('live_access_failures').where('at', '<', before).execute();
    await this.db
      .deleteFrom('live_access_grants')
      .where((e) =>
        e.or([
          e.and([e('consumed_at', 'is', null), e('expires_at', '<', before)]),
          e('playback_until', '<', before),
        ]),
      )
      .execute();
  }

  async deleteEvent(eventId: string): Promise<void> {
    for (const table of ['live_watch_tokens', 'live_access_grants', 'live_access_failures'] as const)
      await this.db.deleteFrom(table).where('event_id', '=', eventId).execute();
  }
}
