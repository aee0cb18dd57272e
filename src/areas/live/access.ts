import { createHmac, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { AuditTrail } from '../../kernel/audit/audit.js';
import type { Authenticator, PresentedCredential } from '../../kernel/auth/authenticate.js';
import type { CustomerAccess } from '../../kernel/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import { newId, randomString } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import { hashToken } from '../../kernel/secrets.js';
import type { Store } from '../../kernel/store/store.js';
import { AccessRepo } from './access-repo.js';
import { liveErrors } from './errors.js';
import { MediaRepo } from './media-repo.js';
import type { LiveEventsTable, LiveWatchTokensTable } from './migrations.js';
import type { LiveService } from './service.js';
import { passwordMatches } from './service.js';

/** Failed attempts are counted over this window (`live.access_failures` of them at most). */
export const FAILURE_WINDOW_MS = 10 * 60_000;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** Who may watch a `tenant_only` event: a person of its customer (a PAT or a Fjord login). */
const TENANT_VIEWER: CustomerAccess = { kind: 'customer', bearer: true, oidc: true };

export interface TokenInput {
  name?: string;
  expires_at?: string | null;
  max_uses?: number | null;
}

/**
 * Viewer access to `password` and `token` events. A viewer proves the secret once (verify-password,
 * verify-token) and receives an access grant `ag_…`; consuming the grant when playback starts
 * counts one use of the token and turns the grant into the viewer's playback pass for the HLS.
 * Secrets are kept only as hashes: the password with scrypt (compared in constant time), tokens
 * and grants with SHA-256 (looked up by hash; they carry 190 random bits).
 */
export class LiveAccess {
  private readonly repo: AccessRepo;
  private readonly media: MediaRepo;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limits: Limits,
    private readonly audit: AuditTrail,
    private readonly live: LiveService,
    private readonly log: Logger,
    private readonly auth: Authenticator,
  ) {
    this.repo = AccessRepo.of(store);
    this.media = MediaRepo.of(store);
  }

  // --- watch tokens (management) -------------------------------------------------------------

  tokenView(row: LiveWatchTokensTable) {
    const now = this.clock.nowMs();
    const status =
      row.expires_at !== null && row.expires_at <= now
        ? 'expired'
        : row.max_uses !== null && row.use_count >= row.max_uses
          ? 'exhausted'
          : 'active';
    return {
      id: row.id,
      event_id: row.event_id,
      name: row.name,
      token_prefix: row.token_prefix,
      status: status as 'active' | 'expired' | 'exhausted',
      expires_at: iso(row.expires_at),
      max_uses: row.max_uses,
      use_count: row.use_count,
      last_used_at: iso(row.last_used_at),
      created_at: iso(row.created_at)!,
    };
  }

  async createToken(customerId: string, eventId: string, input: TokenInput) {
    const plan = await this.live.planOf(customerId);
    const max = this.limits.of('live.tokens_per_event', plan);
    const now = this.clock.nowMs();
    const expires = input.expires_at == null ? null : Date.parse(input.expires_at);
    if (expires !== null && expires <= now)
      throw liveErrors.invalid('/body/expires_at', 'must be in the future');
    const token = `wt_${randomString(32)}`;
    const row: LiveWatchTokensTable = {
      id: newId(),
      event_id: eventId,
      customer_id: customerId,
      name: input.name ?? null,
      token_hash: hashToken(token),
      token_prefix: token.slice(0, 7),
      expires_at: expires,
      max_uses: input.max_uses ?? null,
      use_count: 0,
      last_used_at: null,
      created_at: now,
    };
    await this.store.unitOfWork({ locks: [`live:event:${eventId}`] }, async ({ tx }) => {
      await this.live.loadIn(tx, customerId, eventId);
      const repo = AccessRepo.over(tx);
      if (max !== null && (await repo.countTokens(eventId)) >= max) throw liveErrors.tokenQuota(max);
      await repo.insertToken(row);
    });
    return { ...this.tokenView(row), token };
  }

  async listTokens(customerId: string, eventId: string, page: number, perPage: number) {
    await this.live.load(customerId, eventId);
    const { rows, total } = await this.repo.listTokens(eventId, perPage, (page - 1) * perPage);
    return { tokens: rows.map((r) => this.tokenView(r)), page, per_page: perPage, total };
  }

  // --- viewers --------------------------------------------------------------------------------

  /** A viewer's address as a keyed hash, with a random key per event: the address is not kept. */
  async clientKey(eventId: string, address: string): Promise<string> {
    const stats = await this.media.stats(eventId, () => randomBytes(16).toString('base64'));
    return createHmac('sha256', stats.viewer_salt).update(address).digest('base64url').slice(0, 22);
  }

  private async event(slug: string): Promise<LiveEventsTable> {
    const row = await this.live.repo.bySlug(slug);
    if (!row || row.status === 'draft') throw liveErrors.eventNotFound();
    return row;
  }

  /**
   * Counts an attempt against the viewer's failure budget before it is checked, in one unit under
   * the viewer's lock, so attempts sent together cannot all pass the count. A correct secret takes
   * its attempt back.
   */
  private async reserveAttempt(row: LiveEventsTable, kind: string, client: string): Promise<string> {
    const plan = await this.live.planOf(row.customer_id);
    const max = this.limits.of('live.access_failures', plan) ?? Number.POSITIVE_INFINITY;
    const now = this.clock.nowMs();
    const id = newId();
    await this.store.unitOfWork({ locks: [`live:access:${row.id}:${client}`] }, async ({ tx }) => {
      const repo = AccessRepo.over(tx);
      const failures = await repo.failuresSince(row.id, client, now - FAILURE_WINDOW_MS);
      if (failures.length >= max) {
        const retryAfter = Math.max(1, Math.ceil((failures[0]! + FAILURE_WINDOW_MS - now) / 1000));
        throw liveErrors.tooManyAttempts(max, FAILURE_WINDOW_MS / 1000, retryAfter);
      }
      await repo.insertFailure({ id, event_id: row.id, kind, client, at: now });
    });
    return id;
  }

  private async refund(attemptId: string): Promise<void> {
    await this.repo.deleteFailure(attemptId);
  }

  private async failed(row: LiveEventsTable, kind: string, reason: string) {
    this.log.info({ event_id: row.id, kind, reason }, 'live: viewer access refused');
    await this.audit.record({
      customerId: row.customer_id,
      area: 'live-events',
      action: 'live_event.viewer_access_failed',
      resourceType: 'live_event',
      resourceId: row.id,
      actor: { kind: 'system', id: null },
      details: { kind, reason },
    });
    return this.answer(row, null, null, reason);
  }

  private async answer(
    row: LiveEventsTable,
    grant: string | null,
    expiresAt: number | null,
    reason: string | null,
  ) {
    const view = await this.live.watchOf(row, grant);
    return {
      verified: grant !== null,
      reason: reason as 'invalid' | 'expired' | 'exhausted' | null,
      access_grant: grant,
      access_grant_expires_at: iso(expiresAt),
      watch_state: view.watch_state,
      playback_mode: view.playback_mode,
      live_playback: view.live_playback,
      replay_playback: view.replay_playback,
    };
  }

  /** A new access grant; `consumed` makes it a playback pass at once (nothing to count). */
  private async mint(row: LiveEventsTable, kind: string, tokenId: string | null, consumed = false) {
    const plan = await this.live.planOf(row.customer_id);
    const now = this.clock.nowMs();
    const grant = `ag_${randomString(32)}`;
    const expiresAt = now + (this.limits.of('live.access_grant_seconds', plan) ?? 600) * 1000;
    const playbackMs = (this.limits.of('live.playback_grant_seconds', plan) ?? 43200) * 1000;
    await this.repo.insertGrant({
      id: newId(),
      grant_hash: hashToken(grant),
      event_id: row.id,
      kind,
      token_id: tokenId,
      created_at: now,
      expires_at: expiresAt,
      consumed_at: consumed ? now : null,
      playback_until: consumed ? now + playbackMs : null,
    });
    return { grant, expiresAt };
  }

  private async issue(row: LiveEventsTable, kind: string, tokenId: string | null) {
    const { grant, expiresAt } = await this.mint(row, kind, tokenId);
    return this.answer(row, grant, expiresAt, null);
  }

  async verifyPassword(slug: string, password: string, address: string) {
    const row = await this.event(slug);
    if (row.visibility_mode !== 'password') throw liveErrors.accessMode(row.visibility_mode, 'password');
    const client = await this.clientKey(row.id, address);
    const attempt = await this.reserveAttempt(row, 'password', client);
    if (!(await passwordMatches(row.password_hash, password))) return this.failed(row, 'password', 'invalid');
    await this.refund(attempt);
    return this.issue(row, 'password', null);
  }

  async verifyToken(slug: string, token: string, address: string) {
    const row = await this.event(slug);
    if (row.visibility_mode !== 'token') throw liveErrors.accessMode(row.visibility_mode, 'token');
    return this.checkToken(row, token, address);
  }

  /**
   * The watch view as a viewer sees it. On a `token` event, `token` (the page's `?token=`) is
   * checked as verify-token would (failures counted and rate limited) and a valid one gets a grant,
   * to consume when playback starts. A `tenant_only` event answers only to a bearer of its own
   * customer (403 otherwise), who gets a grant that is already a playback pass: there is no use to
   * count. A consumed `grant` still in its time stands for the password or token it came from.
   */
  async watch(
    slug: string,
    opts: { token?: string; grant?: string; bearer: PresentedCredential | null; address: string },
  ) {
    const row = await this.event(slug);
    let granted: { grant: string; expiresAt: number } | null = null;
    if (row.visibility_mode !== 'tenant_only' && opts.grant && (await this.mayPlay(row, opts.grant))) {
      // A viewer already playing with a grant: no new grant, only the addresses that carry theirs.
      const view = await this.live.watchOf(row, opts.grant);
      return { ...view, access_grant: null, access_grant_expires_at: null };
    }
    if (row.visibility_mode === 'tenant_only') {
      if (!(await this.isTenant(row, opts.bearer))) throw liveErrors.tenantOnly();
      granted = await this.mint(row, 'tenant', null, true);
    } else if (row.visibility_mode === 'token' && opts.token) {
      const checked = await this.checkToken(row, opts.token, opts.address);
      if (checked.access_grant)
        granted = { grant: checked.access_grant, expiresAt: Date.parse(checked.access_grant_expires_at!) };
    }
    const view = await this.live.watchOf(row, granted?.grant ?? null);
    return {
      ...view,
      access_grant: granted?.grant ?? null,
      access_grant_expires_at: iso(granted?.expiresAt ?? null),
    };
  }

  /** Whether the bearer is a PAT or Fjord login of the event's customer (any other answer: no). */
  private async isTenant(row: LiveEventsTable, bearer: PresentedCredential | null): Promise<boolean> {
    if (!bearer) return false;
    const who = await this.auth.identify(TENANT_VIEWER, bearer).catch(() => null);
    if (!who || who.customerId !== row.customer_id) return false;
    return who.credential.kind === 'pat' || who.credential.kind === 'oidc';
  }

  private async checkToken(row: LiveEventsTable, token: string, address: string) {
    const client = await this.clientKey(row.id, address);
    const attempt = await this.reserveAttempt(row, 'token', client);
    const found = await this.repo.tokenByHash(hashToken(token));
    if (!found || found.event_id !== row.id) return this.failed(row, 'token', 'invalid');
    // A real token that is past its time or uses is not a guess: its attempt is given back.
    await this.refund(attempt);
    const status = this.tokenView(found).status;
    if (status !== 'active') return this.failed(row, 'token', status);
    return this.issue(row, 'token', found.id);
  }

  /**
   * Playback starts: the grant is consumed once (the token's `use_count` +1) and lets its viewer
   * fetch the HLS for `live.playback_grant_seconds`. Again: `already_consumed`, nothing counted.
   */
  async consumeGrant(slug: string, accessGrant: string) {
    const row = await this.event(slug);
    const found = await this.repo.grantByHash(hashToken(accessGrant));
    if (!found || found.event_id !== row.id) throw liveErrors.grantNotFound();
    const plan = await this.live.planOf(row.customer_id);
    const playbackMs = (this.limits.of('live.playback_grant_seconds', plan) ?? 43200) * 1000;
    const locks = [`live:grant:${found.id}`, ...(found.token_id ? [`live:token:${found.token_id}`] : [])];
    return this.store.unitOfWork({ locks }, async ({ tx }) => {
      const repo = AccessRepo.over(tx);
      const grant = (await repo.grantByHash(found.grant_hash))!;
      if (grant.consumed_at !== null)
        return { consumed: true, already_consumed: true, playback_expires_at: iso(grant.playback_until) };
      const now = this.clock.nowMs();
      if (grant.expires_at <= now) throw liveErrors.grantExpired();
      if (grant.token_id) {
        const token = await repo.tokenById(grant.token_id);
        if (!token) throw liveErrors.grantExpired();
        const status = this.tokenView(token).status;
        if (status !== 'active') throw liveErrors.tokenUnusable(status);
        await repo.useToken(token.id, now);
      }
      await repo.consumeGrant(grant.id, now, now + playbackMs);
      return { consumed: true, already_consumed: false, playback_expires_at: iso(now + playbackMs) };
    });
  }

  /**
   * Whether an HLS request may be served: public events, or a consumed grant still in its time
   * (from a password, a token, or a bearer of the customer on a `tenant_only` event).
   */
  async mayPlay(row: LiveEventsTable, grant: string | undefined): Promise<string | null | false> {
    if (row.visibility_mode === 'public') return null;
    if (!grant) return false;
    const found = await this.repo.grantByHash(hashToken(grant));
    if (!found || found.event_id !== row.id || found.consumed_at === null) return false;
    if ((found.playback_until ?? 0) <= this.clock.nowMs()) return false;
    return found.id;
  }
}
