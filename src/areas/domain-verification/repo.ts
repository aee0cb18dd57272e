import type { Kysely } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import type {
  DomainVerificationHistoryTable,
  DomainVerificationsTable,
  DomainVerificationTables,
} from './migrations.js';

export interface DomainFilter {
  purpose?: string;
  status?: string;
}

export class DomainVerificationRepo {
  private readonly db: Kysely<DomainVerificationTables>;
  constructor(store: Store) {
    this.db = store.typed<DomainVerificationTables>();
  }

  insert(row: DomainVerificationsTable) {
    return this.db.insertInto('domain_verifications').values(row).execute();
  }

  /** A live (not deleted) record of the customer. */
  find(customerId: string, id: string) {
    return this.db
      .selectFrom('domain_verifications')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  }

  findLiveByDomain(customerId: string, domain: string, purpose: string) {
    return this.db
      .selectFrom('domain_verifications')
      .select('id')
      .where('customer_id', '=', customerId)
      .where('domain', '=', domain)
      .where('purpose', '=', purpose)
      .where('deleted_at', 'is', null)
      .where('status', '!=', 'revoked')
      .executeTakeFirst();
  }

  private filtered(customerId: string, filter: DomainFilter) {
    let q = this.db
      .selectFrom('domain_verifications')
      .where('customer_id', '=', customerId)
      .where('deleted_at', 'is', null);
    if (filter.purpose) q = q.where('purpose', '=', filter.purpose);
    if (filter.status) q = q.where('status', '=', filter.status);
    return q;
  }

  list(customerId: string, filter: DomainFilter, limit: number, offset: number) {
    return this.filtered(customerId, filter)
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
  }

  async count(customerId: string, filter: DomainFilter): Promise<number> {
    const r = await this.filtered(customerId, filter)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  update(id: string, changes: Partial<DomainVerificationsTable>) {
    return this.db.updateTable('domain_verifications').set(changes).where('id', '=', id).execute();
  }

  /** Writes only if the record still has `status` (and is live); true when it did. */
  async updateIfStatus(
    id: string,
    status: string,
    changes: Partial<DomainVerificationsTable>,
  ): Promise<boolean> {
    const r = await this.db
      .updateTable('domain_verifications')
      .set(changes)
      .where('id', '=', id)
      .where('status', '=', status)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Verified records of every customer, checked longest ago first (the daily re-check). */
  dueForRecheck(checkedBefore: number, limit: number) {
    return this.db
      .selectFrom('domain_verifications')
      .selectAll()
      .where('deleted_at', 'is', null)
      .where('status', '=', 'verified')
      .where((eb) => eb.or([eb('last_checked_at', 'is', null), eb('last_checked_at', '<', checkedBefore)]))
      .orderBy('last_checked_at')
      .limit(limit)
      .execute();
  }

  /** Pending records created before the cut-off (they expire to `failed`). */
  stalePending(createdBefore: number, limit: number) {
    return this.db
      .selectFrom('domain_verifications')
      .selectAll()
      .where('deleted_at', 'is', null)
      .where('status', '=', 'pending')
      .where('created_at', '<', createdBefore)
      .limit(limit)
      .execute();
  }

  verifiedDomains(customerId: string, purpose: string) {
    return this.db
      .selectFrom('domain_verifications')
      .select('domain')
      .where('customer_id', '=', customerId)
      .where('purpose', '=', purpose)
      .where('status', '=', 'verified')
      .where('deleted_at', 'is', null)
      .orderBy('verified_at')
      .execute();
  }

  insertHistory(row: DomainVerificationHistoryTable) {
    return this.db.insertInto('domain_verification_history').values(row).execute();
  }

  history(verificationId: string) {
    return this.db
      .selectFrom('domain_verification_history')
      .selectAll()
      .where('verification_id', '=', verificationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
}
