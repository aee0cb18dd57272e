/**
 * Queries on sender profiles: the customer's own, the one default (kept unique by a partial
 * index; its writes run in a unit under the customer's profile lock, `sender-profiles.ts`), and
 * the operator's review queue. Apart from the message queries in `repo.ts`: profiles have rules of their own
 * (`sender-profiles.ts`), and the pipeline, service and reports only look them up.
 */
import type { AnyDb, UnitDb } from '../../kernel/store/unit-of-work.js';
import type { SenderProfilesTable, SmsTables } from './migrations.js';

/** Bound to the store for reads, or to a unit's transaction (`SenderProfileRepo.over`). */
export class SenderProfileRepo {
  constructor(private readonly db: UnitDb<SmsTables>) {}

  static over(db: AnyDb): SenderProfileRepo {
    return new SenderProfileRepo(db);
  }
  insertProfile(row: SenderProfilesTable) {
    return this.db.insertInto('sms_sender_profiles').values(row).execute();
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
  profile(customerId: string, id: string) {
    return this.db
      .selectFrom('sms_sender_profiles')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  profileById(id: string) {
    return this.db.selectFrom('sms_sender_profiles').selectAll().where('id', '=', id).executeTakeFirst();
  }
  defaultProfile(customerId: string) {
    return this.db
      .selectFrom('sms_sender_profiles')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('is_default', '=', 1)
      .executeTakeFirst();
  }
  /** Makes `id` the customer's one default profile (clears the old one first: the unique index). */
  async makeDefault(customerId: string, id: string) {
    await this.db
      .updateTable('sms_sender_profiles')
      .set({ is_default: 0 })
      .where('customer_id', '=', customerId)
      .where('is_default', '=', 1)
      .where('id', '<>', id)
      .execute();
    await this.db.updateTable('sms_sender_profiles').set({ is_default: 1 }).where('id', '=', id).execute();
  }
  /**
   * Makes `id` the default only when the customer has none; answers whether it did. With the
   * partial unique index, a concurrent transaction doing the same fails instead of making two.
   */
  async makeDefaultIfNone(customerId: string, id: string): Promise<boolean> {
    const r = await this.db
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
  oldestProfile(customerId: string) {
    return this.db
      .selectFrom('sms_sender_profiles')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('created_at')
      .orderBy('id')
      .executeTakeFirst();
  }
  async deleteProfile(customerId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('sms_sender_profiles')
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
  countProfiles(customerId: string) {
    return this.db
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
}
