import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveService } from '../../src/areas/live/service.js';
import { expectAuthMatrix, expectTenantIsolation } from '../helpers/contracts.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';

/** Live events management: fields, the lifecycle table, limits, keys, isolation. */
let t: TestFjord;
let a: TestCustomer;

beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_LIMITS: JSON.stringify({ 'live.events': 14 }),
    FJORD_RATE_LIMITS: JSON.stringify({ 'live-events': { points: 10_000, duration: 60 } }),
  });
  a = await t.customer();
});
afterAll(() => t.close());

const create = (body: Record<string, unknown>, key = a.pat) =>
  t.request('POST', '/v1/live-events/events', { key, body });
const post = (id: string, what: string, key = a.pat) =>
  t.request('POST', `/v1/live-events/events/${id}/${what}`, { key });
const code = (r: { body: { detail?: { code: string } } }) => r.body.detail?.code;

describe('live events', () => {
  it('creates an event with a stream key, addresses and a slug from its name', async () => {
    const r = await create({ name: 'Launch Day!', description: 'Our launch', timezone: 'Europe/Oslo' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      slug: 'launch-day',
      name: 'Launch Day!',
      status: 'ready',
      timezone: 'Europe/Oslo',
      visibility_mode: 'public',
      record_enabled: true,
      actual_start_at: null,
    });
    expect(r.body.stream_key).toMatch(/^sk_/);
    expect(r.body.ingest_url).toMatch(/^rtmp:\/\/.+\/live$/);
    expect(r.body.watch_url).toMatch(/\/watch\/launch-day$/);
    const again = await create({ name: 'Launch Day!' });
    expect(again.body.slug).toMatch(/^launch-day-[a-z0-9]{6}$/);
    expect((await create({ name: 'x', slug: 'launch-day' })).status).toBe(409);

    const got = await t.request('GET', `/v1/live-events/events/${r.body.id}`, { key: a.pat });
    expect(got.status).toBe(200);
    expect(got.body.stream_key).toBeUndefined();
    expect(got.body).toMatchObject({ ingest_status: 'idle', current_session: null, recording_count: 0 });

    const services = await t.request('GET', '/v1/account/services', { key: a.pat });
    expect(services.body.map((s: { service_type: string }) => s.service_type)).toContain('live-events');
  });

  it('checks password visibility, time zones and schedules', async () => {
    expect(code(await create({ name: 'p', visibility_mode: 'password' }))).toBe('password_required');
    expect((await create({ name: 'tz', timezone: 'Mars/Base' })).status).toBe(422);
    const future = new Date(t.kernel.clock.nowMs() + 86_400_000).toISOString();
    const s = await create({
      name: 'later',
      scheduled_start_at: future,
      visibility_mode: 'password',
      password: 'open sesame',
    });
    expect(s.body.status).toBe('scheduled');
    expect(s.body.password).toBeUndefined();
    // At its start (on the clock) a scheduled event is ready: an encoder may connect.
    const moved = (await create({ name: 'moved later', scheduled_start_at: future })).body;
    const later = new Date(t.kernel.clock.nowMs() + 2 * 86_400_000).toISOString();
    const patched = await t.request('PATCH', `/v1/live-events/events/${moved.id}`, {
      key: a.pat,
      body: { scheduled_start_at: later },
    });
    expect(patched.body.status).toBe('scheduled');
    const status = async (id: string) =>
      (await t.request('GET', `/v1/live-events/events/${id}`, { key: a.pat })).body.status;
    await t.advance(86_400);
    expect(await status(s.body.id)).toBe('ready');
    expect(await status(moved.id)).toBe('scheduled');
    await t.advance(86_400);
    expect(await status(moved.id)).toBe('ready');
    const d = await create({ name: 'draft one', draft: true });
    expect(d.body.status).toBe('draft');
  });

  it('follows the lifecycle table and refuses other moves without changing anything', async () => {
    const e = (await create({ name: 'cycle', record_enabled: false })).body;
    expect((await post(e.id, 'rehearsal/start')).body.status).toBe('rehearsal');
    const patch = await t.request('PATCH', `/v1/live-events/events/${e.id}`, {
      key: a.pat,
      body: { name: 'n' },
    });
    expect([patch.status, code(patch)]).toEqual([409, 'event_rehearsal']);
    const live = await post(e.id, 'live/start');
    expect(live.body.status).toBe('live');
    expect(live.body.actual_start_at).not.toBeNull();
    expect(code(await post(e.id, 'stream-key/rotate'))).toBe('event_live');
    expect(code(await t.request('DELETE', `/v1/live-events/events/${e.id}`, { key: a.pat }))).toBe(
      'event_live',
    );
    expect(code(await post(e.id, 'rehearsal/start'))).toBe('event_live');
    const stopped = await post(e.id, 'live/stop');
    expect(stopped.body).toMatchObject({ status: 'ended' });
    expect(stopped.body.actual_end_at).not.toBeNull();
    expect(code(await post(e.id, 'live/start'))).toBe('event_ended');
    const rotated = await post(e.id, 'stream-key/rotate');
    expect(rotated.status).toBe(200);
    expect(rotated.body.stream_key).toMatch(/^sk_/);
    expect((await t.request('DELETE', `/v1/live-events/events/${e.id}`, { key: a.pat })).status).toBe(200);
    expect((await t.request('GET', `/v1/live-events/events/${e.id}`, { key: a.pat })).status).toBe(404);

    const rec = (await create({ name: 'recorded' })).body;
    await post(rec.id, 'live/start');
    expect((await post(rec.id, 'live/stop')).body.status).toBe('ending');
    expect(code(await t.request('DELETE', `/v1/live-events/events/${rec.id}`, { key: a.pat }))).toBe(
      'event_ending',
    );
  });

  it('lets the ingest in only with the current key, in a state that takes a stream, one encoder at a time', async () => {
    const live = t.fjord.areas.get('live')!.service as LiveService;
    const e = (await create({ name: 'keys', auto_start_on_ingest: true })).body;
    const rotated = (await post(e.id, 'stream-key/rotate')).body;
    expect(await live.sessions.ingestStarted(e.stream_key, 's-old')).toBeNull();
    expect(await live.sessions.ingestStarted(rotated.stream_key, 's-1')).toBe(e.id);
    expect(await live.sessions.ingestStarted(rotated.stream_key, 's-2')).toBeNull();
    const d = await t.request('GET', `/v1/live-events/events/${e.id}`, { key: a.pat });
    expect(d.body).toMatchObject({
      status: 'live',
      ingest_status: 'receiving',
      current_session: { id: 's-1' },
    });
    await live.sessions.ingestEnded(e.id, 's-1', 'encoder_disconnected', 0);
    await post(e.id, 'live/stop');
    expect(await live.sessions.ingestStarted(rotated.stream_key, 's-3')).toBeNull();
    const draft = (await create({ name: 'drafty', draft: true })).body;
    expect(await live.sessions.ingestStarted(draft.stream_key, 's-4')).toBeNull();
  });

  it('answers the public watch view without credentials, per status and visibility', async () => {
    const watch = (slug: string) => t.request('GET', `/v1/live-events/watch/${slug}`);
    const draft = (await create({ name: 'hidden', draft: true })).body;
    expect((await watch(draft.slug)).status).toBe(404);
    expect((await watch('no-such-event')).status).toBe(404);
    const future = new Date(t.kernel.clock.nowMs() + 3_600_000).toISOString();
    const pub = (await create({ name: 'public show', scheduled_start_at: future })).body;
    const before = await watch(pub.slug);
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({
      event_id: pub.id,
      status: 'scheduled',
      watch_state: 'not_started',
      countdown_enabled: true,
      requires_auth: false,
      auth_type: null,
      playback_mode: 'none',
      live_playback: null,
    });
    const pw = (await create({ name: 'members', visibility_mode: 'password', password: 'letmein' })).body;
    await post(pw.id, 'live/start');
    expect((await watch(pw.slug)).body).toMatchObject({
      watch_state: 'access_required',
      requires_auth: true,
      auth_type: 'password',
      live_playback: null,
    });
    await post(pw.id, 'live/stop');
    expect((await watch(pw.slug)).body).toMatchObject({ status: 'ending', watch_state: 'processing_replay' });
    // Watch addresses carry no customer: a slug is Fjord-wide.
    const b = await t.customer();
    expect(code(await create({ name: 'copy', slug: pub.slug }, b.pat))).toBe('slug_taken');
  });

  it('lists newest first with pages, and publishes the plan limits', async () => {
    const list = await t.request('GET', '/v1/live-events/events?per_page=2', { key: a.pat });
    expect(list.status).toBe(200);
    expect(list.body.events).toHaveLength(2);
    expect(list.body.total).toBeGreaterThan(2);
    expect(list.body.events[0].created_at >= list.body.events[1].created_at).toBe(true);
    const limits = await t.request('GET', '/v1/live-events/limits', { key: a.pat });
    expect(limits.body).toMatchObject({ plan: 'free', max_events: 14, reconnect_window_seconds: 60 });
    expect(code(await create({ name: 'fast', max_bitrate_kbps: limits.body.max_bitrate_kbps + 1 }))).toBe(
      'bitrate_above_plan',
    );
  });

  it('holds the events limit when creates arrive together', async () => {
    const c = await t.customer();
    await expectLimitHolds({
      room: 14,
      attempts: 20,
      send: (i) => create({ name: `race ${i}` }, c.pat),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
  });

  it('keeps customers apart and checks credentials on every route', async () => {
    const b = await t.customer();
    const e = (await create({ name: 'mine' })).body;
    await expectTenantIsolation(t, { key: a.pat }, { key: b.pat }, [
      { method: 'GET', url: `/v1/live-events/events/${e.id}` },
      { method: 'PATCH', url: `/v1/live-events/events/${e.id}`, body: { name: 'theirs' } },
      { method: 'POST', url: `/v1/live-events/events/${e.id}/live/start` },
      { method: 'POST', url: `/v1/live-events/events/${e.id}/stream-key/rotate` },
      { method: 'DELETE', url: `/v1/live-events/events/${e.id}` },
    ]);
    await expectAuthMatrix(t, 'Live events');
  });
});
