import type { AuditTrail } from '../../kernel/audit/audit.js';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Credential } from '../../kernel/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import { newId, randomString } from '../../kernel/ids.js';
import type { JobQueue } from '../../kernel/jobs/queue.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import { insertUnique } from '../../kernel/store/dialect.js';
import type { Store } from '../../kernel/store/store.js';
import { liveErrors } from './errors.js';
import { type EventInput, eventFields, hashStreamKey, newStreamKey, slugify } from './event-fields.js';
import { IngestSessions } from './ingest-sessions.js';
import { assertAllowed, initialStatus, statusAfterStop } from './lifecycle.js';
import { MediaRepo } from './media-repo.js';
import type { LiveEventsTable } from './migrations.js';
import { FINALISE_JOB, LiveReconnect, windowOf } from './reconnect.js';
import { LiveReplay } from './replay.js';
import { LiveRepo } from './repo.js';
import type { EventStatus, Visibility } from './schemas.js';
import { watchView } from './watch.js';

export { liveErrors } from './errors.js';

const DEFAULT_RETENTION_DAYS = 7;
export const SOFT_DELETE_DAYS = 30;
/** Makes a `scheduled` event `ready` at its `scheduled_start_at`, on the clock. */
export const SCHEDULED_START_JOB = 'live.events.scheduled-start';
export { type EventInput, hashStreamKey, passwordMatches } from './event-fields.js';
export { FINALISE_JOB } from './reconnect.js';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** Where encoders and viewers reach Fjord. */
export interface LiveAddresses {
  /** `rtmp://{ingest_host}/live` */
  ingestUrl(): string;
  /** `{live_url}`: the watch and embed pages live under it. */
  liveUrl(): string;
}

/**
 * Live events: the management API's rules. Every check-then-write (the event limit, a unique slug,
 * a lifecycle move) runs in a unit of work holding the customer's or the event's lock.
 */
export class LiveService {
  readonly repo: LiveRepo;
  readonly replay: LiveReplay;
  readonly reconnect: LiveReconnect;
  /** What the ingest reports of encoder connections: start, progress, end. */
  readonly sessions: IngestSessions;

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
    this.sessions = new IngestSessions(store, clock, identity, jobs, this.repo);
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

  async create(customerId: string, actor: Credential, input: EventInput & { name: string }) {
    const limits = await this.planLimits(customerId);
    const now = this.clock.nowMs();
    const fields = await eventFields(input, limits, null);
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
      const changes = await eventFields(input, limits, row);
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
