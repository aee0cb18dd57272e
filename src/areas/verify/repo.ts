import { sql } from 'kysely';
import type { AnyDb, UnitDb } from '../../kernel/store/unit-of-work.js';
import type { SessionStatus, VerifyChargesTable, VerifySessionsTable, VerifyTables } from './migrations.js';

/** Statuses in which a session still waits for its code. */
export const OPEN_STATUSES: readonly SessionStatus[] = ['pending', 'delivered'];

/**
 * Every query of verification. Bound to the store for reads or to a unit's transaction
 * (`VerifyRepo.over`): writes that land together run in a unit the caller opens.
 */
export class VerifyRepo {
  constructor(private readonly db: UnitDb<VerifyTables>) {}

  static over(db: AnyDb): VerifyRepo {
    return new VerifyRepo(db);
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
   * Spends one attempt, and settles the session, in a single statement: the right code verifies
   * it; the last wrong one fails it. Concurrent checks can never use more than `max_attempts`
   * between them, nor verify a session twice. Undefined when the session was not open, spent or
   * expired any more.
   */
  spendAttempt(id: string, nowMs: number, right: boolean, lockedMessage: string) {
    const last = sql<boolean>`attempt_count + 1 >= max_attempts`;
    return this.db
      .updateTable('verify_sessions')
      .set(
        right
          ? {
              attempt_count: sql<number>`attempt_count + 1`,
              status: 'verified',
              verified_at: nowMs,
              ended_at: nowMs,
            }
          : {
              attempt_count: sql<number>`attempt_count + 1`,
              status: sql<SessionStatus>`CASE WHEN ${last} THEN 'failed' ELSE status END`,
              ended_at: sql<number | null>`CASE WHEN ${last} THEN ${nowMs} ELSE ended_at END`,
              error_message: sql<
                string | null
              >`CASE WHEN ${last} THEN ${lockedMessage} ELSE error_message END`,
            },
      )
      .where('id', '=', id)
      .where('status', 'in', OPEN_STATUSES)
      .where('expires_at', '>', nowMs)
      .where(sql<boolean>`attempt_count < max_attempts`)
      .returning(['attempt_count', 'max_attempts', 'status', 'verified_at'])
      .executeTakeFirst();
  }

  /** A new session and its session fee, committed together. */
  async insertSessionWithFee(row: VerifySessionsTable, fee: VerifyChargesTable) {
    const trx = this.db;
    await trx.insertInto('verify_sessions').values(row).execute();
    await trx.insertInto('verify_charges').values(fee).execute();
  }

  /** Marks a hand-over done and bills it, committed together; false when the session had ended. */
  async delivered(id: string, patch: Partial<VerifySessionsTable>, charge: VerifyChargesTable) {
    const trx = this.db;
    const r = await trx
      .updateTable('verify_sessions')
      .set({ ...patch, status: 'delivered' })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    await trx
      .insertInto('verify_charges')
      .values(charge)
      .onConflict((oc) => oc.columns(['session_id', 'item']).doNothing())
      .execute();
    return Number(r.numUpdatedRows) > 0;
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

  /**
   * Records what a hand-over returned (the SMS message id, say) and bills it, together. A charge
   * is recorded at most once per session and item, so a retried job cannot bill twice.
   */
  async handedOver(id: string, deliveryRef: string, charge: VerifyChargesTable | null) {
    const trx = this.db;
    await trx
      .updateTable('verify_sessions')
      .set({ delivery_ref: deliveryRef })
      .where('id', '=', id)
      .execute();
    if (charge) {
      await trx
        .insertInto('verify_charges')
        .values(charge)
        .onConflict((oc) => oc.columns(['session_id', 'item']).doNothing())
        .execute();
    }
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
