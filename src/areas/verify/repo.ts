import { type Kysely, sql } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import type { SessionStatus, VerifyChargesTable, VerifySessionsTable, VerifyTables } from './migrations.js';

/** Statuses in which a session still waits for its code. */
export const OPEN_STATUSES: readonly SessionStatus[] = ['pending', 'delivered'];

export class VerifyRepo {
  private readonly db: Kysely<VerifyTables>;
  constructor(store: Store) {
    this.db = store.typed<VerifyTables>();
  }

  insertSession(row: VerifySessionsTable) {
    return this.db.insertInto('verify_sessions').values(row).execute();
  }

  session(customerId: string, id: string) {
    return this.db
      .selectFrom('verify_sessions')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  sessionById(id: string) {
    return this.db.selectFrom('verify_sessions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * Takes one attempt in a single statement, so concurrent checks can never use more than
   * `max_attempts` between them. Undefined when the session is not open, spent or expired.
   */
  takeAttempt(id: string, nowMs: number) {
    return this.db
      .updateTable('verify_sessions')
      .set({ attempt_count: sql<number>`attempt_count + 1` })
      .where('id', '=', id)
      .where('status', 'in', OPEN_STATUSES)
      .where('expires_at', '>', nowMs)
      .where(sql<boolean>`attempt_count < max_attempts`)
      .returning(['attempt_count', 'max_attempts'])
      .executeTakeFirst();
  }

  /** Moves a session from one of `from` to a new status; false when it was no longer in `from`. */
  async transition(
    id: string,
    from: readonly SessionStatus[],
    patch: Partial<VerifySessionsTable> & { status: SessionStatus },
  ): Promise<boolean> {
    const r = await this.db
      .updateTable('verify_sessions')
      .set(patch)
      .where('id', '=', id)
      .where('status', 'in', from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Records what a hand-off returned (the SMS message id, say) without touching the status. */
  async setDeliveryRef(id: string, deliveryRef: string, sender: string | null) {
    await this.db
      .updateTable('verify_sessions')
      .set({ delivery_ref: deliveryRef, sender })
      .where('id', '=', id)
      .execute();
  }

  /** A charge is recorded at most once per session and item (a retried job cannot bill twice). */
  async insertCharge(row: VerifyChargesTable) {
    await this.db
      .insertInto('verify_charges')
      .values(row)
      .onConflict((oc) => oc.columns(['session_id', 'item']).doNothing())
      .execute();
  }

  /** How many sessions the customer has had, and since when: for the account's services list. */
  usage(customerId: string) {
    return this.db
      .selectFrom('verify_sessions')
      .select((eb) => [eb.fn.countAll<number | string>().as('sessions'), eb.fn.min('created_at').as('first')])
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
  }

  charges(customerId: string, sessionId: string) {
    return this.db
      .selectFrom('verify_charges')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('session_id', '=', sessionId)
      .orderBy('created_at')
      .orderBy('item', 'desc')
      .execute();
  }

  chargesBetween(customerId: string, fromMs: number, toMs: number) {
    return this.db
      .selectFrom('verify_charges')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('created_at', '>=', fromMs)
      .where('created_at', '<', toMs)
      .execute();
  }
}
