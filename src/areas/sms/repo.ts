import type { Kysely, Transaction } from 'kysely';
import { isUniqueViolation } from '../../kernel/store/dialect.js';
import type { Store } from '../../kernel/store/store.js';
import type {
  KeywordsTable,
  MessageStatus,
  MessagesTable,
  PartsTable,
  SenderProfilesTable,
  SmsTables,
} from './migrations.js';

export interface MessageFilter {
  status?: MessageStatus;
  direction?: string;
  messageType?: string;
  fromMs?: number;
  toMs?: number;
  recipient?: string;
  customerRef?: string;
}

export interface CountRow {
  direction: string;
  status: string;
  n: number;
  units: number;
}

/** The only place with queries on the SMS tables. */
export class SmsRepo {
  readonly db: Kysely<SmsTables>;
  constructor(private readonly store: Store) {
    this.db = store.typed<SmsTables>();
  }

  // ---- sender profiles

  insertProfile(row: SenderProfilesTable, db: Kysely<SmsTables> = this.db) {
    return db.insertInto('sms_sender_profiles').values(row).execute();
  }
  /** Runs `work` in a unit of work (one transaction; see kernel/store/unit-of-work.ts). */
  unit<T>(work: (trx: Kysely<SmsTables>) => Promise<T>): Promise<T> {
    return this.store.unitOfWork({}, ({ tx }) => work(tx as Kysely<SmsTables>));
  }
  /** Runs `work` in a transaction, again when a concurrent one took the default first (PostgreSQL). */
  async profileTransaction<T>(work: (trx: Kysely<SmsTables>) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.store.unitOfWork({}, ({ tx }) => work(tx as Transaction<SmsTables>));
      } catch (err) {
        if (attempt >= 5 || !isUniqueViolation(err)) throw err;
      }
    }
  }
  listProfiles(customerId: string) {
    return this.db
      .selectFrom('sms_sender_profiles')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  profile(customerId: string, id: string, db: Kysely<SmsTables> = this.db) {
    return db
      .selectFrom('sms_sender_profiles')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  profileById(id: string) {
    return this.db.selectFrom('sms_sender_profiles').selectAll().where('id', '=', id).executeTakeFirst();
  }
  defaultProfile(customerId: string, db: Kysely<SmsTables> = this.db) {
    return db
      .selectFrom('sms_sender_profiles')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('is_default', '=', 1)
      .executeTakeFirst();
  }
  /** Makes `id` the customer's one default profile (clears the old one first: the unique index). */
  async makeDefault(customerId: string, id: string, db: Kysely<SmsTables> = this.db) {
    await db
      .updateTable('sms_sender_profiles')
      .set({ is_default: 0 })
      .where('customer_id', '=', customerId)
      .where('is_default', '=', 1)
      .where('id', '<>', id)
      .execute();
    await db.updateTable('sms_sender_profiles').set({ is_default: 1 }).where('id', '=', id).execute();
  }
  /**
   * Makes `id` the default only when the customer has none; answers whether it did. With the
   * partial unique index, a concurrent transaction doing the same fails instead of making two.
   */
  async makeDefaultIfNone(customerId: string, id: string, db: Kysely<SmsTables>): Promise<boolean> {
    const r = await db
      .updateTable('sms_sender_profiles')
      .set({ is_default: 1 })
      .where('id', '=', id)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('sms_sender_profiles as d')
              .select('d.id')
              .where('d.customer_id', '=', customerId)
              .where('d.is_default', '=', 1),
          ),
        ),
      )
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
  /** The customer's oldest profile. */
  oldestProfile(customerId: string, db: Kysely<SmsTables>) {
    return db
      .selectFrom('sms_sender_profiles')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('created_at')
      .orderBy('id')
      .executeTakeFirst();
  }
  async deleteProfile(customerId: string, id: string, db: Kysely<SmsTables> = this.db): Promise<boolean> {
    const r = await db
      .deleteFrom('sms_sender_profiles')
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
  countProfiles(customerId: string, db: Kysely<SmsTables>) {
    return db
      .selectFrom('sms_sender_profiles')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('customer_id', '=', customerId)
      .executeTakeFirstOrThrow()
      .then((r) => Number(r.n));
  }
  listProfilesByApproval(status: string | undefined) {
    let q = this.db.selectFrom('sms_sender_profiles').selectAll();
    if (status) q = q.where('approval_status', '=', status as SenderProfilesTable['approval_status']);
    return q.orderBy('created_at').orderBy('id').limit(500).execute();
  }
  setApproval(id: string, status: SenderProfilesTable['approval_status'], note: string | null, at: number) {
    return this.db
      .updateTable('sms_sender_profiles')
      .set({ approval_status: status, review_note: note, reviewed_at: at })
      .where('id', '=', id)
      .execute();
  }
  /** A customer's profile whose sender is this number (inbound to a dedicated number). */
  profileBySenderId(senderId: string) {
    return this.db
      .selectFrom('sms_sender_profiles')
      .selectAll()
      .where('sender_id', '=', senderId)
      .where('approval_status', '=', 'approved')
      .orderBy('created_at')
      .executeTakeFirst();
  }

  // ---- messages

  async insertMessages(rows: MessagesTable[], db: Kysely<SmsTables> = this.db) {
    if (rows.length === 0) return;
    // PostgreSQL takes at most 65535 bind parameters per statement.
    for (let i = 0; i < rows.length; i += 500) {
      await db
        .insertInto('sms_messages')
        .values(rows.slice(i, i + 500))
        .execute();
    }
  }
  message(customerId: string, id: string) {
    return this.db
      .selectFrom('sms_messages')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  messageById(id: string) {
    return this.db.selectFrom('sms_messages').selectAll().where('id', '=', id).executeTakeFirst();
  }
  /** Moves a message from one of `from` to `to`; false when it was in no such state (someone else moved it). */
  async transition(
    id: string,
    from: readonly MessageStatus[],
    to: MessageStatus,
    patch: Partial<MessagesTable>,
    db: Kysely<SmsTables> = this.db,
  ): Promise<boolean> {
    const r = await db
      .updateTable('sms_messages')
      .set({ ...patch, status: to })
      .where('id', '=', id)
      .where('status', 'in', [...from])
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  private filtered(customerId: string, f: MessageFilter) {
    let q = this.db.selectFrom('sms_messages').where('customer_id', '=', customerId);
    if (f.status) q = q.where('status', '=', f.status);
    if (f.direction) q = q.where('direction', '=', f.direction as MessagesTable['direction']);
    if (f.messageType) q = q.where('message_type', '=', f.messageType as MessagesTable['message_type']);
    if (f.fromMs !== undefined) q = q.where('created_at', '>=', f.fromMs);
    if (f.toMs !== undefined) q = q.where('created_at', '<', f.toMs);
    if (f.recipient) q = q.where('to_number', '=', f.recipient);
    if (f.customerRef) q = q.where('customer_ref', '=', f.customerRef);
    return q;
  }
  listMessages(customerId: string, f: MessageFilter, limit: number, offset: number) {
    return this.filtered(customerId, f)
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
  }
  async countMessages(customerId: string, f: MessageFilter): Promise<number> {
    const r = await this.filtered(customerId, f)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }
  /** The latest outbound message to `phone` that allowed replies (sent from `fromNumber` when given). */
  lastReplyableTo(phone: string, sinceMs: number, fromNumber: string | null) {
    let q = this.db
      .selectFrom('sms_messages')
      .selectAll()
      .where('to_number', '=', phone)
      .where('direction', '=', 'OUTBOUND')
      .where('allow_reply', '=', 1)
      .where('created_at', '>=', sinceMs);
    if (fromNumber !== null) q = q.where('from_number', '=', fromNumber);
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').executeTakeFirst();
  }
  /** Counts and units by direction and status of messages created in [fromMs, toMs). */
  async counts(customerId: string, fromMs: number | null, toMs: number | null): Promise<CountRow[]> {
    let q = this.db.selectFrom('sms_messages').where('customer_id', '=', customerId);
    if (fromMs !== null) q = q.where('created_at', '>=', fromMs);
    if (toMs !== null) q = q.where('created_at', '<', toMs);
    const rows = await q
      .select((eb) => [
        'direction',
        'status',
        eb.fn.countAll<number>().as('n'),
        eb.fn.sum<number>('units_count').as('units'),
      ])
      .groupBy(['direction', 'status'])
      .execute();
    return rows.map((r) => ({
      direction: r.direction,
      status: r.status,
      n: Number(r.n),
      units: Number(r.units ?? 0),
    }));
  }
  /** Outbound units handed to the network (sent_at in [fromMs, toMs)): what is billed. */
  async billedUnits(customerId: string, fromMs: number, toMs: number): Promise<{ n: number; units: number }> {
    const r = await this.db
      .selectFrom('sms_messages')
      .where('customer_id', '=', customerId)
      .where('direction', '=', 'OUTBOUND')
      .where('sent_at', '>=', fromMs)
      .where('sent_at', '<', toMs)
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('units_count').as('units')])
      .executeTakeFirst();
    return { n: Number(r?.n ?? 0), units: Number(r?.units ?? 0) };
  }
  /** Outbound messages of the customer to this number or contact that are still waiting to be sent. */
  async waitingFor(customerId: string, phone: string | null, contactId: string | null) {
    if (!phone && !contactId) return [];
    return this.db
      .selectFrom('sms_messages')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('direction', '=', 'OUTBOUND')
      .where('status', 'in', ['QUEUED', 'SCHEDULED'])
      .where((eb) =>
        eb.or([
          ...(phone ? [eb('to_number', '=', phone)] : []),
          ...(contactId ? [eb('contact_id', '=', contactId)] : []),
        ]),
      )
      .execute();
  }
  /** GDPR erasure of a contact: the number is replaced by its mask wherever it appears. */
  async maskNumber(customerId: string, phone: string | null, masked: string, contactId: string | null) {
    if (phone) await this.maskIn(customerId, phone, masked);
    if (contactId) {
      await this.db
        .updateTable('sms_messages')
        .set({ contact_id: null })
        .where('customer_id', '=', customerId)
        .where('contact_id', '=', contactId)
        .execute();
    }
  }
  private async maskIn(customerId: string, phone: string, masked: string) {
    await this.db
      .updateTable('sms_messages')
      .set({ to_number: masked })
      .where('customer_id', '=', customerId)
      .where('to_number', '=', phone)
      .execute();
    await this.db
      .updateTable('sms_messages')
      .set({ from_number: masked })
      .where('customer_id', '=', customerId)
      .where('from_number', '=', phone)
      .execute();
  }

  // ---- parts

  insertParts(rows: PartsTable[], db: Kysely<SmsTables> = this.db) {
    return db
      .insertInto('sms_parts')
      .values(rows)
      .onConflict((oc) => oc.column('smsc_message_id').doNothing())
      .execute();
  }
  part(smscMessageId: string) {
    return this.db
      .selectFrom('sms_parts')
      .selectAll()
      .where('smsc_message_id', '=', smscMessageId)
      .executeTakeFirst();
  }
  partsOf(messageId: string) {
    return this.db
      .selectFrom('sms_parts')
      .selectAll()
      .where('message_id', '=', messageId)
      .orderBy('part_number')
      .execute();
  }
  setPartState(smscMessageId: string, state: PartsTable['state'], error: string | null) {
    return this.db
      .updateTable('sms_parts')
      .set({ state, error })
      .where('smsc_message_id', '=', smscMessageId)
      .execute();
  }

  // ---- keywords

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
