/**
 * Queries on messages and their parts (one row per SMS segment handed to the SMSC): what the
 * pipeline, the message history and the reports read and write. Sender profiles have theirs in
 * `sender-profile-repo.ts`, keywords in `keyword-repo.ts`; every query on the SMS tables is in
 * one of the three.
 */
import type { AnyDb, UnitDb } from '../../kernel/store/unit-of-work.js';
import type { MessageStatus, MessagesTable, PartsTable, SmsTables } from './migrations.js';

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

/** Bound to the store for reads, or to a unit's transaction (`SmsRepo.over`, through `unitsOf`). */
export class SmsRepo {
  constructor(readonly db: UnitDb<SmsTables>) {}

  static over(db: AnyDb): SmsRepo {
    return new SmsRepo(db);
  }

  // ---- messages

  async insertMessages(rows: MessagesTable[]) {
    if (rows.length === 0) return;
    // PostgreSQL takes at most 65535 bind parameters per statement.
    for (let i = 0; i < rows.length; i += 500) {
      await this.db
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
  ): Promise<boolean> {
    const r = await this.db
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

  insertParts(rows: PartsTable[]) {
    return this.db
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
}
