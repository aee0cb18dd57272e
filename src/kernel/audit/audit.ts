import type { Kysely } from 'kysely';
import type { Credential } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { newId } from '../ids.js';
import { fromJson, toJson } from '../store/dialect.js';
import type { KernelTables } from '../store/kernel-tables.js';
import type { Store } from '../store/store.js';

export interface AuditEntry {
  customerId: string;
  area: string;
  action: string;
  resourceType?: string;
  resourceId?: string;
  actor?: Pick<Credential, 'kind' | 'id'> | { kind: 'system'; id: null };
  details?: Record<string, unknown>;
}

export interface AuditRecord {
  id: string;
  area: string;
  action: string;
  resource_type: string | null;
  resource_id: string | null;
  actor_type: string;
  actor_id: string | null;
  details: Record<string, unknown>;
  created_at: string;
}

/**
 * Append-only history per customer. Areas write to it (database history, cluster history,
 * domain history read from it); nothing updates or deletes an entry except a full reset.
 */
export class AuditTrail {
  private readonly db: Kysely<KernelTables>;
  constructor(
    store: Store,
    private readonly clock: Clock,
  ) {
    this.db = store.typed<KernelTables>();
  }

  async record(e: AuditEntry, db: Kysely<KernelTables> = this.db): Promise<string> {
    const id = newId();
    await db
      .insertInto('audit_events')
      .values({
        id,
        customer_id: e.customerId,
        area: e.area,
        action: e.action,
        resource_type: e.resourceType ?? null,
        resource_id: e.resourceId ?? null,
        actor_type: e.actor?.kind ?? 'system',
        actor_id: e.actor?.id ?? null,
        details: toJson(e.details ?? {}),
        created_at: this.clock.nowMs(),
      })
      .execute();
    return id;
  }

  async list(
    customerId: string,
    filter: {
      area?: string;
      resourceType?: string;
      resourceId?: string;
      limit?: number;
      offset?: number;
    } = {},
  ): Promise<{ entries: AuditRecord[]; total: number }> {
    let q = this.db.selectFrom('audit_events').where('customer_id', '=', customerId);
    if (filter.area) q = q.where('area', '=', filter.area);
    if (filter.resourceType) q = q.where('resource_type', '=', filter.resourceType);
    if (filter.resourceId) q = q.where('resource_id', '=', filter.resourceId);
    const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
    const rows = await q
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit ?? 50)
      .offset(filter.offset ?? 0)
      .execute();
    return {
      total: Number(total?.n ?? 0),
      entries: rows.map((r) => ({
        id: r.id,
        area: r.area,
        action: r.action,
        resource_type: r.resource_type,
        resource_id: r.resource_id,
        actor_type: r.actor_type,
        actor_id: r.actor_id,
        details: fromJson(r.details, {}),
        created_at: new Date(r.created_at).toISOString(),
      })),
    };
  }
}
