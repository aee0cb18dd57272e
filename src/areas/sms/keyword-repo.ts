/**
 * Queries on keywords of the shared number: each reserved by one customer, found by its word when
 * a message comes in, and counted as messages reach it. Apart from the message queries in
 * `repo.ts` because keywords are a table and a customer-facing resource of their own.
 */
import type { UnitDb } from '../../kernel/store/unit-of-work.js';
import type { KeywordsTable, SmsTables } from './migrations.js';

export class KeywordRepo {
  constructor(private readonly db: UnitDb<SmsTables>) {}

  insertKeyword(row: KeywordsTable) {
    return this.db.insertInto('sms_keywords').values(row).execute();
  }
  listKeywords(customerId: string) {
    return this.db
      .selectFrom('sms_keywords')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  keyword(customerId: string, id: string) {
    return this.db
      .selectFrom('sms_keywords')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  keywordByWord(word: string) {
    return this.db.selectFrom('sms_keywords').selectAll().where('keyword', '=', word).executeTakeFirst();
  }
  updateKeyword(customerId: string, id: string, patch: Partial<KeywordsTable>) {
    return this.db
      .updateTable('sms_keywords')
      .set(patch)
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .execute();
  }
  async deleteKeyword(customerId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('sms_keywords')
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
  countKeywordMessage(id: string, at: number) {
    return this.db
      .updateTable('sms_keywords')
      .set((eb) => ({ messages_received: eb('messages_received', '+', 1), last_message_at: at }))
      .where('id', '=', id)
      .execute();
  }
}
