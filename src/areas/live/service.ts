import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { AuditTrail } from '../../kernel/audit/audit.js';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Credential } from '../../kernel/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import { AppError } from '../../kernel/errors.js';
import { newId, randomString } from '../../kernel/ids.js';
import type { JobQueue } from '../../kernel/jobs/queue.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import { insertUnique, toJson } from '../../kernel/store/dialect.js';
import type { Store } from '../../kernel/store/store.js';
import { liveErrors } from './errors.js';
import { ALLOWED, assertAllowed, initialStatus, statusAfterStop } from './lifecycle.js';
import { MediaRepo } from './media-repo.js';
import type { StreamMetrics } from './meter.js';
import type { LiveEventsTable } from './migrations.js';
import { FINALISE_JOB, LiveReconnect, RECONNECT_JOB, windowOf } from './reconnect.js';
import { LiveReplay } from './replay.js';
import { LiveRepo } from './repo.js';
import type { EventStatus, Visibility } from './schemas.js';
import { watchView } from './watch.js';

export { liveErrors } from './errors.js';

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number) => Promise<Buffer>;
const DEFAULT_RETENTION_DAYS = 7;
export const SOFT_DELETE_DAYS = 30;
/** Makes a `scheduled` event `ready` at its `scheduled_start_at`, on the clock. */
export const SCHEDULED_START_JOB = 'live.events.scheduled-start';
export { FINALISE_JOB } from './reconnect.js';

/** Where encoders and viewers reach Fjord. */
export interface LiveAddresses {
  /** `rtmp://{ingest_host}/live` */
  ingestUrl(): string;
  /** `{live_url}`: the watch and embed pages live under it. */
  liveUrl(): string;
}

export interface EventInput {
  name?: string;
  slug?: string;
  description?: string;
  scheduled_start_at?: string | null;
  scheduled_end_at?: string | null;
  timezone?: string;
  visibility_mode?: Visibility;
  password?: string;
  record_enabled?: boolean;
  replay_enabled?: boolean;
  rehearsal_enabled?: boolean;
  embed_enabled?: boolean;
  auto_start_on_ingest?: boolean;
  max_bitrate_kbps?: number;
  retention_days?: number;
  reconnect_window_seconds?: number;
  draft?: boolean;
}

export const hashStreamKey = (key: string): string => createHash('sha256').update(key).digest('hex');
const newStreamKey = (): string => `sk_${randomString(32)}`;

async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  return `scrypt:${salt.toString('base64')}:${(await scrypt(password, salt, 32)).toString('base64')}`;
}

export async function passwordMatches(stored: string | null, given: string): Promise<boolean> {
  if (!stored) return false;
  const [, salt, hash] = stored.split(':');
  const want = Buffer.from(hash ?? '', 'base64');
  const got = await scrypt(given, Buffer.from(salt ?? '', 'base64'), 32);
  return want.length === got.length && timingSafeEqual(want, got);
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const ms = (s: string | null | undefined): number | null | undefined =>
  s === undefined ? undefined : s === null ? null : Date.parse(s);

function slugify(name: string): string {
  const base = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/g, '');
  return base || 'event';
}

function isTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * Live events: the management API's rules. Every check-then-write (the event limit, a unique slug,
 * a lifecycle move) runs in a unit of work holding the customer's or the event's lock.
 */
export class LiveService {
  readonly repo: LiveRepo;
  readonly replay: LiveReplay;
  readonly reconnect: LiveReconnect;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly identity: IdentityService,
    private readonly limits: Limits,
    private readonly audit: AuditTrail,
    private readonly addresses: LiveAddresses,
    private readonly jobs: JobQueue,
    sessionsDir: string,
  ) {
    this.repo = LiveRepo.of(store);
    this.replay = new LiveReplay(store, clock, () => addresses.liveUrl(), sessionsDir);
    this.reconnect = new LiveReconnect(store, clock, jobs, audit);
  }

  now(): number {
    return this.clock.nowMs();
  }

  async planOf(customerId: string): Promise<string> {
    return (await this.identity.getCustomer(customerId))?.plan ?? 'free';
  }

  async planLimits(customerId: string) {
    const plan = await this.planOf(customerId);
    return {
      plan,
      max_events: this.limits.of('live.events', plan),
      max_bitrate_kbps: this.limits.of('live.max_bitrate_kbps', plan) ?? 20000,
      reconnect_window_seconds: this.limits.of('live.reconnect_window_seconds', plan) ?? 60,
      max_retention_days: this.limits.of('live.retention_days', plan) ?? 3650,
    };
  }

  view(row: LiveEventsTable) {
    const live = this.addresses.liveUrl();
    return {
      id: row.id,
      slug: row.slug,
      name: row.name,
      description: row.description,
      status: row.status as EventStatus,
      scheduled_start_at: iso(row.scheduled_start_at),
      scheduled_end_at: iso(row.scheduled_end_at),
      actual_start_at: iso(row.actual_start_at),
      actual_end_at: iso(row.actual_end_at),
      timezone: row.timezone,
      visibility_mode: row.visibility_mode as Visibility,
      record_enabled: row.record_enabled === 1,
      replay_enabled: row.replay_enabled === 1,
      rehearsal_enabled: row.rehearsal_enabled === 1,
      embed_enabled: row.embed_enabled === 1,
      auto_start_on_ingest: row.auto_start_on_ingest === 1,
      max_bitrate_kbps: row.max_bitrate_kbps,
      retention_days: row.retention_days,
      reconnect_window_seconds: windowOf(row),
      ingest_url: this.addresses.ingestUrl(),
      watch_url: `${live}/watch/${row.slug}`,
      embed_url: `${live}/embed/${row.slug}`,
      hls_url: `${live}/hls/${row.id}/index.m3u8`,
      created_at: iso(row.created_at)!,
      updated_at: iso(row.updated_at)!,
    };
  }

  /** Checks the fields both create and update take; returns the column changes. */
  private async fields(
    input: EventInput,
    limits: Awaited<ReturnType<LiveService['planLimits']>>,
    current: LiveEventsTable | null,
  ): Promise<Partial<LiveEventsTable>> {
    const out: Partial<LiveEventsTable> = {};
    if (input.name !== undefined) out.name = input.name;
    if (input.description !== undefined) out.description = input.description;
    const start = ms(input.scheduled_start_at);
    const end = ms(input.scheduled_end_at);
    if (start !== undefined) out.scheduled_start_at = start;
    if (end !== undefined) out.scheduled_end_at = end;
    const s = out.scheduled_start_at ?? current?.scheduled_start_at ?? null;
    const e = out.scheduled_end_at ?? current?.scheduled_end_at ?? null;
    if (s !== null && e !== null && e <= s)
      throw invalid('/body/scheduled_end_at', 'must be after scheduled_start_at');
    if (input.timezone !== undefined) {
      if (!isTimezone(input.timezone)) throw invalid('/body/timezone', 'is not an IANA time zone name');
      out.timezone = input.timezone;
    }
    if (input.visibility_mode !== undefined) out.visibility_mode = input.visibility_mode;
    const visibility = out.visibility_mode ?? current?.visibility_mode ?? 'public';
    if (input.password !== undefined) out.password_hash = await hashPassword(input.password);
    if (
      visibility === 'password' &&
      !(out.password_hash ?? (current?.visibility_mode === 'password' && current.password_hash))
    )
      throw liveErrors.passwordRequired();
    if (visibility !== 'password' && input.visibility_mode !== undefined) out.password_hash = null;
    for (const flag of [
      'record_enabled',
      'replay_enabled',
      'rehearsal_enabled',
      'embed_enabled',
      'auto_start_on_ingest',
    ] as const) {
      if (input[flag] !== undefined) out[flag] = input[flag] ? 1 : 0;
    }
    if (input.max_bitrate_kbps !== undefined) {
      if (input.max_bitrate_kbps > limits.max_bitrate_kbps)
        throw liveErrors.bitrateTooHigh(limits.max_bitrate_kbps);
      out.max_bitrate_kbps = input.max_bitrate_kbps;
    }
    if (input.retention_days !== undefined) {
      if (input.retention_days > limits.max_retention_days)
        throw invalid('/body/retention_days', `is at most ${limits.max_retention_days} on this plan`);
      out.retention_days = input.retention_days;
    }
    if (input.reconnect_window_seconds !== undefined)
      out.reconnect_window_seconds = input.reconnect_window_seconds;
    return out;
  }

  async create(customerId: string, actor: Credential, input: EventInput & { name: string }) {
    const limits = await this.planLimits(customerId);
    const now = this.clock.nowMs();
    const fields = await this.fields(input, limits, null);
    const streamKey = newStreamKey();
    const row: LiveEventsTable = {
      id: newId(),
      customer_id: customerId,
      slug: input.slug ?? '',
      name: input.name,
      description: null,
      status: initialStatus(input.draft === true, fields.scheduled_start_at ?? null, now),
      scheduled_start_at: null,
      scheduled_end_at: null,
      actual_start_at: null,
      actual_end_at: null,
      timezone: 'UTC',
      visibility_mode: 'public',
      password_hash: null,
      record_enabled: 1,
      replay_enabled: 1,
      rehearsal_enabled: 1,
      embed_enabled: 1,
      auto_start_on_ingest: 0,
      max_bitrate_kbps: limits.max_bitrate_kbps,
      retention_days: Math.min(DEFAULT_RETENTION_DAYS, limits.max_retention_days),
      stream_key_hash: hashStreamKey(streamKey),
      ingest_session_id: null,
      ingest_started_at: null,
      last_session_id: null,
      stream_key_prefix: streamKey.slice(0, 7),
      stream_key_rotated_at: null,
      reconnect_window_seconds: limits.reconnect_window_seconds,
      disconnected_at: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
      ...fields,
    };
    await this.store.unitOfWork({ locks: [`live:customer:${customerId}`] }, async ({ tx }) => {
      const repo = LiveRepo.over(tx);
      if (limits.max_events !== null && (await repo.countActive(customerId)) >= limits.max_events)
        throw liveErrors.quota(limits.max_events, limits.plan);
      if (input.slug) {
        if (await repo.slugExists(input.slug)) throw liveErrors.slugTaken(input.slug);
      } else {
        // A readable slug from the name; a short random tail when it is taken.
        const base = slugify(input.name);
        row.slug = base;
        while (await repo.slugExists(row.slug)) row.slug = `${base}-${randomString(6).toLowerCase()}`;
      }
      // Two customers racing for one slug: the unique index decides.
      await insertUnique(
        () => repo.insert(row),
        () => liveErrors.slugTaken(row.slug),
      );
      if (row.status === 'scheduled') await this.readyAtStart(row.id, row.scheduled_start_at!, tx);
    });
    await this.record(customerId, actor, 'live_event.create', row.id);
    return { ...this.view(row), stream_key: streamKey };
  }

  async list(customerId: string, status: string | undefined, page: number, perPage: number) {
    const { rows, total } = await this.repo.list(customerId, status, perPage, (page - 1) * perPage);
    return { events: rows.map((r) => this.view(r)), page, per_page: perPage, total };
  }

  async load(customerId: string, id: string): Promise<LiveEventsTable> {
    const row = await this.repo.get(customerId, id);
    if (!row) throw liveErrors.eventNotFound(id);
    return row;
  }

  /** The event inside a unit of work (404 when it is not the customer's). */
  async loadIn(tx: Parameters<typeof LiveRepo.over>[0], customerId: string, id: string) {
    const row = await LiveRepo.over(tx).get(customerId, id);
    if (!row) throw liveErrors.eventNotFound(id);
    return row;
  }

  async detail(customerId: string, id: string) {
    const row = await this.load(customerId, id);
    const receiving = row.ingest_session_id !== null;
    return {
      ...this.view(row),
      ingest_status: receiving ? ('receiving' as const) : ('idle' as const),
      current_session: receiving
        ? { id: row.ingest_session_id!, started_at: iso(row.ingest_started_at)! }
        : null,
      recording_count: await MediaRepo.of(this.store).countRecordings(row.id),
      replay_playback: await this.replay.playback(row),
    };
  }

  /** Runs a move under the event's lock: reads the row again inside, checks, writes. */
  private async move<T>(
    customerId: string,
    id: string,
    fn: (row: LiveEventsTable, repo: LiveRepo, tx: Parameters<typeof LiveRepo.over>[0]) => Promise<T>,
  ): Promise<T> {
    return this.store.unitOfWork({ locks: [`live:event:${id}`] }, async ({ tx }) => {
      const repo = LiveRepo.over(tx);
      const row = await repo.get(customerId, id);
      if (!row) throw liveErrors.eventNotFound(id);
      return fn(row, repo, tx);
    });
  }

  async update(customerId: string, actor: Credential, id: string, input: EventInput) {
    const limits = await this.planLimits(customerId);
    const row = await this.move(customerId, id, async (row, repo, tx) => {
      assertAllowed('update', row.status);
      const changes = await this.fields(input, limits, row);
      changes.updated_at = this.clock.nowMs();
      // Moving the start into the future schedules a ready event; into the past makes it ready.
      if (row.status !== 'draft' && changes.scheduled_start_at !== undefined)
        changes.status = initialStatus(false, changes.scheduled_start_at, this.clock.nowMs());
      if (changes.status === 'scheduled') await this.readyAtStart(row.id, changes.scheduled_start_at!, tx);
      await repo.update(row.id, changes);
      return { ...row, ...changes };
    });
    await this.record(customerId, actor, 'live_event.update', id);
    return this.view(row);
  }

  /** A job at the event's start that makes it `ready` (an encoder may then connect). */
  private async readyAtStart(id: string, startMs: number, tx: Parameters<typeof LiveRepo.over>[0]) {
    await this.jobs.enqueue(SCHEDULED_START_JOB, { event_id: id }, { runAt: startMs, db: tx });
  }

  /**
   * The start time has come: a `scheduled` event is `ready`. A job whose start was moved later
   * finds the event's start still ahead and leaves it (the move queued a job of its own).
   */
  async scheduledStart(id: string): Promise<void> {
    await this.store.unitOfWork({ locks: [`live:event:${id}`] }, async ({ tx }) => {
      const repo = LiveRepo.over(tx);
      const row = await repo.byId(id);
      const now = this.clock.nowMs();
      if (row?.status !== 'scheduled' || row.deleted_at !== null) return;
      if (row.scheduled_start_at !== null && row.scheduled_start_at > now) return;
      await repo.update(id, { status: 'ready', updated_at: now });
    });
  }

  async remove(customerId: string, actor: Credential, id: string) {
    await this.move(customerId, id, async (row, repo) => {
      assertAllowed('delete', row.status);
      await repo.update(row.id, { deleted_at: this.clock.nowMs(), updated_at: this.clock.nowMs() });
    });
    await this.record(customerId, actor, 'live_event.delete', id);
    return { id, deleted: true, purge_after_days: SOFT_DELETE_DAYS };
  }

  async startRehearsal(customerId: string, actor: Credential, id: string) {
    return this.transition(customerId, actor, id, 'rehearsal', (row) => {
      assertAllowed('rehearsal', row.status);
      if (row.rehearsal_enabled !== 1) throw liveErrors.rehearsalDisabled();
      return { status: 'rehearsal' };
    });
  }

  async goLive(customerId: string, actor: Credential, id: string) {
    return this.transition(customerId, actor, id, 'live', (row) => {
      assertAllowed('goLive', row.status);
      return { status: 'live', actual_start_at: row.actual_start_at ?? this.clock.nowMs() };
    });
  }

  async stop(customerId: string, actor: Credential, id: string) {
    const view = await this.transition(customerId, actor, id, 'stop', async (row, tx) => {
      assertAllowed('stop', row.status);
      const next = statusAfterStop(row.status, row.record_enabled === 1);
      // The recording is finalised by a job once the encoder is gone (written with the move).
      if (next === 'ending') await this.jobs.enqueue(FINALISE_JOB, { event_id: row.id }, { db: tx });
      return next === 'ready' ? { status: next } : { status: next, actual_end_at: this.clock.nowMs() };
    });
    if (view.status === 'ending') this.jobs.wake(FINALISE_JOB);
    return view;
  }

  private async transition(
    customerId: string,
    actor: Credential,
    id: string,
    what: string,
    decide: (
      row: LiveEventsTable,
      tx: Parameters<typeof LiveRepo.over>[0],
    ) => Partial<LiveEventsTable> | Promise<Partial<LiveEventsTable>>,
  ) {
    const row = await this.move(customerId, id, async (row, repo, tx) => {
      const changes = { ...(await decide(row, tx)), updated_at: this.clock.nowMs() };
      await repo.update(row.id, changes);
      return { ...row, ...changes };
    });
    await this.record(customerId, actor, `live_event.${what}`, id);
    return this.view(row);
  }

  async rotateKey(customerId: string, actor: Credential, id: string) {
    const key = newStreamKey();
    await this.move(customerId, id, async (row, repo) => {
      assertAllowed('rotateKey', row.status);
      const now = this.clock.nowMs();
      await repo.update(row.id, {
        stream_key_hash: hashStreamKey(key),
        stream_key_prefix: key.slice(0, 7),
        stream_key_rotated_at: now,
        updated_at: now,
      });
    });
    await this.record(customerId, actor, 'live_event.rotate_key', id);
    return { id, stream_key: key, ingest_url: this.addresses.ingestUrl() };
  }

  /**
   * The ingest's check when an encoder publishes: the event the key belongs to, when it may
   * receive a stream now and no other encoder is sending to it. `auto_start_on_ingest` moves a
   * `ready` event to `live`. Null refuses the encoder.
   */
  async ingestStarted(streamKey: string, sessionId: string): Promise<string | null> {
    const found = await this.repo.byStreamKeyHash(hashStreamKey(streamKey));
    if (!found) return null;
    // A suspended customer's stream keys stop working, as its API keys do (identity.isActive).
    if (!(await this.identity.isActive(found.customer_id))) return null;
    return this.store.unitOfWork({ locks: [`live:event:${found.id}`] }, async ({ tx }) => {
      const repo = LiveRepo.over(tx);
      const row = await repo.get(found.customer_id, found.id);
      if (!row || row.stream_key_hash !== found.stream_key_hash) return null;
      if (!(ALLOWED.ingest as readonly string[]).includes(row.status) || row.ingest_session_id) return null;
      const now = this.clock.nowMs();
      const changes: Partial<LiveEventsTable> = {
        ingest_session_id: sessionId,
        ingest_started_at: now,
        last_session_id: sessionId,
        // An encoder back within the reconnect window: the event goes on as if it never left.
        disconnected_at: null,
        updated_at: now,
      };
      if (row.status === 'ready' && row.auto_start_on_ingest === 1) {
        changes.status = 'live';
        changes.actual_start_at = row.actual_start_at ?? now;
      }
      await repo.update(row.id, changes);
      await MediaRepo.over(tx).insertSession({
        id: sessionId,
        event_id: row.id,
        customer_id: row.customer_id,
        started_at: now,
        ended_at: null,
        end_reason: null,
        bytes_received: 0,
        metrics: null,
        last_frame_at: null,
        updated_at: now,
      });
      return row.id;
    });
  }

  /**
   * The ingest's periodic report of a session: what ffmpeg measures of the stream, stored on the
   * session so every process can show it. Answers whether the stream may go on (the event was
   * stopped: no) and the event's bitrate limit.
   */
  async ingestProgress(
    eventId: string,
    sessionId: string,
    metrics: StreamMetrics,
    bytes: number,
    lastFrameAt: number | null,
  ): Promise<{ accept: boolean; maxBitrateKbps: number }> {
    await MediaRepo.of(this.store).updateSession(sessionId, {
      metrics: toJson(metrics),
      bytes_received: bytes,
      last_frame_at: lastFrameAt,
      updated_at: this.clock.nowMs(),
    });
    const row = await this.repo.byId(eventId);
    const accept =
      !!row &&
      row.deleted_at === null &&
      row.ingest_session_id === sessionId &&
      (ALLOWED.ingest as readonly string[]).includes(row.status);
    return { accept, maxBitrateKbps: row?.max_bitrate_kbps ?? 0 };
  }

  /**
   * Called when the ingest starts: sessions still marked open were cut by a crash or a restart of
   * the ingest (one process runs the rtmp role), so no event stays blocked by a dead encoder.
   */
  async ingestRestarted(): Promise<void> {
    await this.repo.clearSessions();
    await MediaRepo.of(this.store).endOpenSessions(this.clock.nowMs(), 'ingest_restarted');
  }

  /**
   * The ingest's report that an encoder connection ended, with why and how many bytes it sent.
   * A stopped event waiting for its encoder to leave has its recordings finalised now. A `live`
   * event stays live for its reconnect window: a job on the clock moves it on as a stop would
   * unless an encoder connects again before.
   */
  async ingestEnded(
    eventId: string,
    sessionId: string,
    reason: string,
    bytes: number,
    metrics?: StreamMetrics,
    lastFrameAt?: number | null,
  ): Promise<void> {
    const wake = await this.store.unitOfWork({ locks: [`live:event:${eventId}`] }, async ({ tx }) => {
      const now = this.clock.nowMs();
      const media = MediaRepo.over(tx);
      const session = await media.session(sessionId);
      if (session && session.ended_at === null)
        await media.updateSession(sessionId, {
          ended_at: now,
          end_reason: reason,
          bytes_received: Math.max(bytes, session.bytes_received),
          ...(metrics ? { metrics: toJson(metrics) } : {}),
          ...(lastFrameAt ? { last_frame_at: lastFrameAt } : {}),
          updated_at: now,
        });
      const repo = LiveRepo.over(tx);
      const row = await repo.byId(eventId);
      if (!row || row.ingest_session_id !== sessionId) return null;
      const dropped = row.status === 'live' ? { disconnected_at: now } : {};
      await repo.update(eventId, {
        ingest_session_id: null,
        ingest_started_at: null,
        ...dropped,
        updated_at: now,
      });
      if (row.status === 'live') {
        await this.jobs.enqueue(
          RECONNECT_JOB,
          { event_id: eventId },
          { db: tx, runAt: now + windowOf(row) * 1000 },
        );
        // A window of 0 is over at once: the job need not wait for its next poll.
        return windowOf(row) === 0 ? RECONNECT_JOB : null;
      }
      if (row.status !== 'ending') return null;
      await this.jobs.enqueue(FINALISE_JOB, { event_id: eventId }, { db: tx });
      return FINALISE_JOB;
    });
    if (wake) this.jobs.wake(wake);
  }

  /**
   * The session whose HLS a viewer may fetch: the event's latest encoder connection, for events
   * that are public and not drafts (password, token and tenant-only viewing need access grants,
   * which this build does not issue yet).
   */
  async playbackEvent(eventId: string): Promise<LiveEventsTable | null> {
    const row = await this.repo.byId(eventId);
    if (!row || row.deleted_at !== null || row.status === 'draft' || row.status === 'rehearsal') return null;
    return row.last_session_id ? row : null;
  }

  private async record(customerId: string, actor: Credential, action: string, eventId: string) {
    await this.audit.record({
      customerId,
      area: 'live-events',
      action,
      resourceType: 'live_event',
      resourceId: eventId,
      actor: { kind: actor.kind, id: actor.id },
    });
  }

  /** The public watch view of an event; `grant` (a viewer's access grant) goes into its addresses. */
  async watchOf(row: LiveEventsTable, grant: string | null = null) {
    const replay = await this.replay.playback(row, grant);
    return watchView(row, this.view(row).hls_url, this.clock.nowMs(), grant, replay);
  }
}

function invalid(path: string, what: string) {
  const field = path.split('/').pop();
  const message = `${field} ${what}.`;
  return new AppError('invalid', 'invalid_field', message, { errors: [{ path, message }] });
}
