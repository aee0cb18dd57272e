import { createHmac } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Dispatcher } from 'undici';
import { lazyPackage } from '../lazy.js';

const undici = lazyPackage<typeof import('undici')>('undici');

import type { Clock } from '../clock.js';
import { newId, randomString } from '../ids.js';
import type { JobQueue } from '../jobs/queue.js';
import type { SecretBox } from '../secrets.js';
import type { KernelTables } from '../store/kernel-tables.js';
import type { Store } from '../store/store.js';
import {
  assertSafeTarget,
  PrivateTargetError,
  publicOnlyDispatcher,
  UnsafeTargetError,
} from './ssrf-guard.js';

export const WEBHOOK_JOB = 'webhook.deliver';
/** Deliveries are retried with exponential backoff for this long after the event. */
export const WEBHOOK_RETRY_WINDOW_MS = 24 * 3600_000;
const TIMEOUT_MS = 10_000;

/** `Fjord-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, as Stripe signs its events. */
export function signWebhook(secret: string, unixSeconds: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

export interface WebhookEvent {
  customerId: string;
  url: string;
  eventType: string;
  /** The JSON body, as the area designed it. */
  payload: unknown;
}

export interface DeliveryView {
  id: string;
  event_type: string;
  url: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

const deliveryView = (r: KernelTables['webhook_deliveries']): DeliveryView => ({
  id: r.id,
  event_type: r.event_type,
  url: r.url,
  status: r.status,
  attempts: r.attempts,
  last_status_code: r.last_status_code,
  last_error: r.last_error,
  created_at: new Date(r.created_at).toISOString(),
  delivered_at: r.delivered_at === null ? null : new Date(r.delivered_at).toISOString(),
});

/**
 * One outbound delivery service for every area: signed JSON POSTs under a per-customer secret,
 * retried with exponential backoff for 24 h, every attempt written to the delivery log.
 */
export class WebhookService {
  private readonly db: Kysely<KernelTables>;
  private readonly post: typeof fetch;
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly box: SecretBox,
    private readonly jobs: JobQueue,
    private readonly allowPrivate: boolean,
    fetchImpl?: typeof fetch,
  ) {
    this.db = store.typed<KernelTables>();
    this.post = fetchImpl ?? this.undiciPost(() => (allowPrivate ? undefined : publicOnlyDispatcher()));
    jobs.register<{ deliveryId: string }>(WEBHOOK_JOB, {
      maxAttempts: 1000, // bounded by the 24 h window instead
      backoffSeconds: (attempt) => Math.min(3600, 10 * 2 ** (attempt - 1)),
      run: ({ deliveryId }) => this.attempt(deliveryId),
    });
  }

  /** The customer's signing secret, created on first use. */
  async secretFor(customerId: string): Promise<string> {
    const row = await this.db
      .selectFrom('webhook_secrets')
      .select('secret_sealed')
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
    if (row) return this.box.open(row.secret_sealed);
    const secret = `whsec_${randomString(40)}`;
    await this.db
      .insertInto('webhook_secrets')
      .values({
        customer_id: customerId,
        secret_sealed: this.box.seal(secret),
        created_at: this.clock.nowMs(),
      })
      .onConflict((oc) => oc.column('customer_id').doNothing())
      .execute();
    return this.secretFor(customerId);
  }

  async rotateSecret(customerId: string): Promise<string> {
    await this.db.deleteFrom('webhook_secrets').where('customer_id', '=', customerId).execute();
    return this.secretFor(customerId);
  }

  async send(event: WebhookEvent): Promise<string> {
    const id = newId();
    const now = this.clock.nowMs();
    await this.db
      .insertInto('webhook_deliveries')
      .values({
        id,
        customer_id: event.customerId,
        event_type: event.eventType,
        url: event.url,
        payload: JSON.stringify(event.payload),
        status: 'pending',
        attempts: 0,
        last_status_code: null,
        last_error: null,
        give_up_at: now + WEBHOOK_RETRY_WINDOW_MS,
        created_at: now,
        delivered_at: null,
      })
      .execute();
    await this.jobs.enqueue(WEBHOOK_JOB, { deliveryId: id });
    return id;
  }

  async listDeliveries(
    customerId: string,
    limit = 50,
  ): Promise<{ deliveries: DeliveryView[]; total: number }> {
    const total = await this.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    const deliveries = rows.map(deliveryView);
    return { deliveries, total: Number(total?.n ?? 0) };
  }

  /**
   * Rewrites `needle` as `replacement` in everything the delivery log of this customer keeps as
   * text (payloads, URLs, errors of deliveries and attempts): for an erasure reaching data an area
   * once put in its webhooks (e.g. a phone number). The needle is matched in the stored text, as
   * written (a JSON payload holds a `+4791234567` as is). Answers the deliveries changed.
   */
  async scrub(customerId: string, needle: string, replacement: string): Promise<number> {
    if (needle === '') return 0;
    const swap = (column: string) => sql<string>`replace(${sql.ref(column)}, ${needle}, ${replacement})`;
    const holds = (column: string) => sql<boolean>`${swap(column)} <> ${sql.ref(column)}`;
    return this.store.unitOfWork({}, async (unit) => {
      const trx: Kysely<KernelTables> = unit.tx;
      const changed = await trx
        .updateTable('webhook_deliveries')
        .set({ payload: swap('payload'), url: swap('url'), last_error: swap('last_error') })
        .where('customer_id', '=', customerId)
        .where((eb) => eb.or([holds('payload'), holds('url'), holds('last_error')]))
        .executeTakeFirst();
      await trx
        .updateTable('webhook_attempts')
        .set({ error: swap('error') })
        .where(holds('error'))
        .where(
          'delivery_id',
          'in',
          trx.selectFrom('webhook_deliveries').select('id').where('customer_id', '=', customerId),
        )
        .execute();
      return Number(changed.numUpdatedRows);
    });
  }

  /** The state of these deliveries, for an area that keeps its own record pointing at them. */
  async deliveriesByIds(ids: string[]): Promise<Map<string, DeliveryView>> {
    const out = new Map<string, DeliveryView>();
    if (ids.length === 0) return out;
    const rows = await this.db.selectFrom('webhook_deliveries').selectAll().where('id', 'in', ids).execute();
    for (const r of rows) out.set(r.id, deliveryView(r));
    return out;
  }

  attemptsOf(deliveryId: string) {
    return this.db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('delivery_id', '=', deliveryId)
      .orderBy('attempted_at')
      .execute();
  }

  /**
   * undici's fetch, bound to the dispatcher that refuses private addresses at connect time; both
   * made on the first delivery, not at start.
   */
  private undiciPost(makeDispatcher: () => Dispatcher | undefined): typeof fetch {
    let dispatcher: Dispatcher | undefined | null = null;
    return ((url: string, init: RequestInit) => {
      if (dispatcher === null) dispatcher = makeDispatcher();
      const { fetch: undiciFetch } = undici();
      return undiciFetch(url, { ...(init as object), dispatcher } as Parameters<typeof undiciFetch>[1]);
    }) as unknown as typeof fetch;
  }

  /** One attempt. Throws to have the job queue retry it later; returns when done for good. */
  private async attempt(deliveryId: string): Promise<void> {
    const d = await this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('id', '=', deliveryId)
      .executeTakeFirst();
    if (!d || d.status !== 'pending') return;
    const started = this.clock.nowMs();
    let statusCode: number | null = null;
    let error: string | null = null;
    let permanent = false;
    try {
      await assertSafeTarget(d.url, this.allowPrivate);
      const t = Math.floor(started / 1000);
      const res = await this.post(d.url, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Fjord-Webhooks/1',
          'fjord-signature': signWebhook(await this.secretFor(d.customer_id), t, d.payload),
          'fjord-event-type': d.event_type,
          'fjord-delivery-id': d.id,
        },
        body: d.payload,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      statusCode = res.status;
      await res.body?.cancel().catch(() => {});
      if (res.status < 200 || res.status >= 300) error = `HTTP ${res.status}`;
    } catch (err) {
      const cause = (err as { cause?: unknown })?.cause;
      const unsafe =
        err instanceof UnsafeTargetError ? err : cause instanceof UnsafeTargetError ? cause : null;
      error = unsafe ? unsafe.message : err instanceof Error ? err.message : String(err);
      // Say which setting allows it: a local receiver during development is the usual case.
      if (unsafe instanceof PrivateTargetError)
        error += '; the operator allows such targets with FJORD_WEBHOOK_ALLOW_PRIVATE=true';
      permanent = unsafe !== null;
    }
    const now = this.clock.nowMs();
    await this.db
      .insertInto('webhook_attempts')
      .values({
        id: newId(),
        delivery_id: d.id,
        attempted_at: started,
        status_code: statusCode,
        error,
        duration_ms: Math.max(0, now - started),
      })
      .execute();
    const giveUp = error !== null && (permanent || now >= d.give_up_at);
    await this.db
      .updateTable('webhook_deliveries')
      .set({
        attempts: d.attempts + 1,
        last_status_code: statusCode,
        last_error: error,
        status: error === null ? 'delivered' : giveUp ? 'failed' : 'pending',
        delivered_at: error === null ? now : null,
      })
      .where('id', '=', d.id)
      .execute();
    if (error !== null && !giveUp) throw new Error(`webhook delivery failed: ${error}`);
  }
}
