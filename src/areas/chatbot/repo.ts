import type { Kysely } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import type { AnyDb } from '../../kernel/store/unit-of-work.js';
import type {
  ChatbotBotsTable,
  ChatbotChunksTable,
  ChatbotMessagesTable,
  ChatbotSessionsTable,
  ChatbotSourcesTable,
  ChatbotTables,
} from './migrations.js';

export class ChatbotRepo {
  constructor(private readonly db: Kysely<ChatbotTables>) {}

  static of(store: Store): ChatbotRepo {
    return new ChatbotRepo(store.typed<ChatbotTables>());
  }
  /** A repo over a unit of work's transaction. */
  static over(tx: AnyDb): ChatbotRepo {
    return new ChatbotRepo(tx);
  }

  async countBots(customerId: string): Promise<number> {
    const r = await this.db
      .selectFrom('chatbot_bots')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }
  async insertBot(row: ChatbotBotsTable) {
    await this.db.insertInto('chatbot_bots').values(row).execute();
  }
  bots(customerId: string, status?: string) {
    let q = this.db.selectFrom('chatbot_bots').selectAll().where('customer_id', '=', customerId);
    if (status) q = q.where('status', '=', status);
    return q.orderBy('created_at').orderBy('id').execute();
  }
  /** By id or by slug. */
  bot(customerId: string, idOrSlug: string) {
    return this.db
      .selectFrom('chatbot_bots')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where((eb) => eb.or([eb('id', '=', idOrSlug), eb('slug', '=', idOrSlug)]))
      .executeTakeFirst();
  }
  async updateBot(id: string, patch: Partial<ChatbotBotsTable>) {
    await this.db.updateTable('chatbot_bots').set(patch).where('id', '=', id).execute();
  }
  async deleteBot(id: string) {
    await this.db.deleteFrom('chatbot_bots').where('id', '=', id).execute();
  }

  async countSources(botId: string): Promise<number> {
    const r = await this.db
      .selectFrom('chatbot_sources')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('bot_id', '=', botId)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }
  async insertSource(row: ChatbotSourcesTable) {
    await this.db.insertInto('chatbot_sources').values(row).execute();
  }
  sources(botId: string) {
    return this.db
      .selectFrom('chatbot_sources')
      .selectAll()
      .where('bot_id', '=', botId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  source(botId: string, id: string) {
    return this.db
      .selectFrom('chatbot_sources')
      .selectAll()
      .where('bot_id', '=', botId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  sourceById(id: string) {
    return this.db.selectFrom('chatbot_sources').selectAll().where('id', '=', id).executeTakeFirst();
  }
  async updateSource(id: string, patch: Partial<ChatbotSourcesTable>) {
    await this.db.updateTable('chatbot_sources').set(patch).where('id', '=', id).execute();
  }
  async deleteSource(id: string) {
    await this.db.deleteFrom('chatbot_sources').where('id', '=', id).execute();
  }

  async replaceChunks(sourceId: string, chunks: ChatbotChunksTable[]) {
    await this.db.deleteFrom('chatbot_chunks').where('source_id', '=', sourceId).execute();
    for (let i = 0; i < chunks.length; i += 200)
      await this.db
        .insertInto('chatbot_chunks')
        .values(chunks.slice(i, i + 200))
        .execute();
  }
  chunks(botId: string) {
    return this.db.selectFrom('chatbot_chunks').selectAll().where('bot_id', '=', botId).execute();
  }

  session(botId: string, id: string) {
    return this.db
      .selectFrom('chatbot_sessions')
      .selectAll()
      .where('bot_id', '=', botId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  async insertSession(row: ChatbotSessionsTable) {
    await this.db.insertInto('chatbot_sessions').values(row).execute();
  }
  async touchSession(id: string, at: number) {
    await this.db.updateTable('chatbot_sessions').set({ last_message_at: at }).where('id', '=', id).execute();
  }
  /** The last `limit` messages, oldest first. */
  async history(sessionId: string, limit: number) {
    const rows = await this.db
      .selectFrom('chatbot_messages')
      .selectAll()
      .where('session_id', '=', sessionId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.reverse();
  }
  async insertMessages(rows: ChatbotMessagesTable[]) {
    await this.db.insertInto('chatbot_messages').values(rows).execute();
  }
}
