import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import type { SecretBox } from '../secrets.js';
import { isUniqueViolation } from '../store/dialect.js';
import type { KernelTables } from '../store/kernel-tables.js';
import type { Store } from '../store/store.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;

export type IdempotencyOutcome =
  | { kind: 'fresh' }
  | { kind: 'replay'; status: number; body: string; contentType: string | null };

const errors = {
  badKey: () =>
    new AppError(
      'invalid',
      'idempotency_key_invalid',
      'Idempotency-Key must be 1-255 printable characters.',
      {
        errors: [{ path: '/headers/idempotency-key', message: 'must be 1-255 printable characters' }],
      },
    ),
  reused: () =>
    new AppError(
      'invalid',
      'idempotency_key_reused',
      'This Idempotency-Key was used with a different request; use a new key for a new request.',
    ),
  inFlight: () =>
    new AppError(
      'conflict',
      'idempotency_request_in_progress',
      'A request with this Idempotency-Key is still in progress.',
    ),
};

/**
 * Stripe's rules: the first request with a key runs; a later one with the same key and the same
 * body gets the first status and body again; the same key with another body is a 422; keys live
 * for 24 hours. Requests that fail validation (any 422) are not recorded, nor are 5xx answers (so
 * a retry can succeed).
 */
export class IdempotencyStore {
  private readonly db: Kysely<KernelTables>;
  constructor(
    store: Store,
    private readonly clock: Clock,
    private readonly box: SecretBox,
  ) {
    this.db = store.typed<KernelTables>();
  }

  static fingerprint(method: string, url: string, body: unknown): string {
    return createHash('sha256')
      .update(`${method} ${url}\n${JSON.stringify(body ?? null)}`)
      .digest('hex');
  }

  async begin(scope: string, key: string, requestHash: string): Promise<IdempotencyOutcome> {
    if (key.length === 0 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) throw errors.badKey();
    const now = this.clock.nowMs();
    for (let tries = 0; tries < 2; tries++) {
      try {
        await this.db
          .insertInto('idempotency_keys')
          .values({
            scope,
            key,
            request_hash: requestHash,
            status_code: null,
            response_body: null,
            content_type: null,
            created_at: now,
            expires_at: now + IDEMPOTENCY_TTL_MS,
          })
          .execute();
        return { kind: 'fresh' };
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
      const row = await this.db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('scope', '=', scope)
        .where('key', '=', key)
        .executeTakeFirst();
      if (!row) continue;
      if (row.expires_at <= now) {
        await this.forget(scope, key);
        continue;
      }
      if (row.request_hash !== requestHash) throw errors.reused();
      if (row.status_code === null) throw errors.inFlight();
      return {
        kind: 'replay',
        status: row.status_code,
        // Answers can hold secrets shown once (a new API key), so they are kept encrypted.
        body: row.response_body ? this.box.open(row.response_body) : '',
        contentType: row.content_type,
      };
    }
    throw errors.inFlight();
  }

  async complete(scope: string, key: string, status: number, body: string, contentType: string | null) {
    // A 422 is a validation failure wherever it was found (schema or service): the corrected
    // request may reuse the key.
    if (status >= 500 || status === 422) return this.forget(scope, key);
    await this.db
      .updateTable('idempotency_keys')
      .set({ status_code: status, response_body: this.box.seal(body), content_type: contentType })
      .where('scope', '=', scope)
      .where('key', '=', key)
      .execute();
  }

  async forget(scope: string, key: string) {
    await this.db.deleteFrom('idempotency_keys').where('scope', '=', scope).where('key', '=', key).execute();
  }

  async purgeExpired(): Promise<number> {
    const r = await this.db
      .deleteFrom('idempotency_keys')
      .where('expires_at', '<=', this.clock.nowMs())
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
