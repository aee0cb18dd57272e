import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useEffect, useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { Link, navigate } from '../../router.js';
import { TimeChart } from '../../ui/chart.js';
import { SchemaForm } from '../../ui/schema-form.js';
import { DataTable, type Row } from '../../ui/table.js';
import { ConfirmDelete, Facts, Failure, Panel, QueryView, SecretOnce } from '../../ui/widgets.js';
import { Player } from './player.js';

const when = (v: unknown) => (typeof v === 'string' ? new Date(v).toLocaleString() : '—');
/** How often the page asks for the event's health and audience while it is open. */
const WATCH_MS = 5_000;
/** Samples kept for the health and audience charts (an hour at one every 5 s). */
const KEEP = 720;

/** A live event: its state, the player, ingest settings and health, audience, sessions, recordings, tokens. */
export function EventPage({ id }: { id: string }) {
  const api = useApi();
  const queries = useQueryClient();
  const path = { params: { path: { event_id: id } } };
  const event = useQuery({
    queryKey: ['live', 'event', id],
    queryFn: async () => (await must(api.GET('/v1/live-events/events/{event_id}', path))) as Row,
    refetchInterval: WATCH_MS,
  });
  const e = event.data;
  const [problem, setProblem] = useState<unknown>(null);
  const act =
    (what: '/v1/live-events/events/{event_id}/live/start' | '/v1/live-events/events/{event_id}/live/stop') =>
    async () => {
      setProblem(null);
      try {
        await must(api.POST(what, path));
      } catch (err) {
        setProblem(err);
      }
      await queries.invalidateQueries({ queryKey: ['live'] });
    };
  return (
    <section>
      <p class="crumbs">
        <Link href="/live">Live events</Link> / <span>{e ? String(e['name']) : id}</span>
      </p>
      <h1>Live event: {e ? String(e['name']) : id}</h1>
      <QueryView query={event} what="the event">
        {() =>
          e && (
            <>
              <p>
                The event is <strong class={`live-${String(e['status'])}`}>{String(e['status'])}</strong>.
                Watch page: <a href={String(e['watch_url'])}>{String(e['watch_url'])}</a>
              </p>
              <div class="actions">
                <button type="button" onClick={act('/v1/live-events/events/{event_id}/live/start')}>
                  Go live
                </button>
                <button type="button" onClick={act('/v1/live-events/events/{event_id}/live/stop')}>
                  End the event
                </button>
              </div>
              {problem ? <Failure error={problem} /> : null}
              <section aria-labelledby="player-heading">
                <h2 id="player-heading">Player</h2>
                <Player slug={String(e['slug'])} live={e['status'] === 'live'} />
              </section>
              <Ingest id={id} />
              <Health id={id} />
              <Sessions id={id} />
              <Recordings id={id} />
              <Tokens id={id} />
              <section aria-labelledby="edit-heading">
                <h2 id="edit-heading">Settings</h2>
                <Facts
                  data={e}
                  keys={[
                    'visibility_mode',
                    'scheduled_start_at',
                    'record_enabled',
                    'replay_enabled',
                    'embed_enabled',
                    'auto_start_on_ingest',
                    'max_bitrate_kbps',
                  ]}
                />
                <Panel title="Edit the event">
                  <SchemaForm
                    operationId="updateLiveEvent"
                    fields={[
                      'name',
                      'description',
                      'scheduled_start_at',
                      'visibility_mode',
                      'record_enabled',
                      'replay_enabled',
                      'embed_enabled',
                      'auto_start_on_ingest',
                    ]}
                    labels={{ visibility_mode: 'Who may watch', scheduled_start_at: 'Starts at (ISO time)' }}
                    initial={Object.fromEntries(
                      [
                        'name',
                        'description',
                        'scheduled_start_at',
                        'visibility_mode',
                        'record_enabled',
                        'replay_enabled',
                        'embed_enabled',
                        'auto_start_on_ingest',
                      ]
                        .filter((k) => e[k] !== null && e[k] !== undefined)
                        .map((k) => [k, e[k]]),
                    )}
                    idPrefix="edit-event"
                    submitLabel="Save event"
                    onSubmit={async (body) => {
                      await must(
                        api.PATCH('/v1/live-events/events/{event_id}', { ...path, body: body as never }),
                      );
                      await queries.invalidateQueries({ queryKey: ['live'] });
                    }}
                  />
                </Panel>
              </section>
              <section class="danger-zone" aria-labelledby="danger-heading">
                <h2 id="danger-heading">Delete</h2>
                <ConfirmDelete
                  name={String(e['name'])}
                  what="event"
                  onConfirm={async () => {
                    await must(api.DELETE('/v1/live-events/events/{event_id}', path));
                    await queries.invalidateQueries({ queryKey: ['live'] });
                    navigate('/live');
                  }}
                />
              </section>
            </>
          )
        }
      </QueryView>
    </section>
  );
}

/** Where the encoder sends the stream, for OBS and ffmpeg, and the stream key's rotation. */
function Ingest({ id }: { id: string }) {
  const api = useApi();
  const path = { params: { path: { event_id: id } } };
  const ingest = useQuery({
    queryKey: ['live', 'ingest', id],
    queryFn: () => must(api.GET('/v1/live-events/events/{event_id}/ingest', path)),
  });
  const [key, setKey] = useState<string | null>(null);
  const i = ingest.data;
  const kbps = i?.recommended.max_bitrate_kbps ?? 4500;
  const gop = i?.recommended.keyframe_interval_seconds ?? 2;
  return (
    <section aria-labelledby="ingest-heading">
      <h2 id="ingest-heading">Ingest settings</h2>
      {i && (
        <>
          <dl class="facts">
            <div>
              <dt>Server (OBS: Settings › Stream › Custom)</dt>
              <dd>
                <code>{i.ingest_url}</code>
              </dd>
            </div>
            <div>
              <dt>Stream key</dt>
              <dd>
                <code>{i.stream_key.prefix}…</code> (shown once, when created or rotated)
              </dd>
            </div>
            <div>
              <dt>Video, audio</dt>
              <dd>
                {i.recommended.video_codec}, {i.recommended.audio_codec}, a keyframe every {gop} s, at most{' '}
                {kbps} kbit/s
              </dd>
            </div>
          </dl>
          <p>With ffmpeg:</p>
          <pre class="code">{`ffmpeg -re -i input.mp4 -c:v libx264 -preset veryfast -b:v ${Math.min(kbps, 4500)}k -maxrate ${kbps}k \\
  -bufsize ${kbps * 2}k -g ${gop * 30} -c:a aac -b:a 128k -f flv "${i.ingest_url}/STREAM_KEY"`}</pre>
        </>
      )}
      <button
        type="button"
        onClick={async () => {
          const r = await must(api.POST('/v1/live-events/events/{event_id}/stream-key/rotate', path));
          setKey(r.stream_key);
          await ingest.refetch();
        }}
      >
        Rotate stream key
      </button>
      {key && <SecretOnce label="Stream key" value={key} onDone={() => setKey(null)} />}
    </section>
  );
}

/** Samples of a value taken while the page is open, for a chart. */
function useSamples(value: number | null | undefined, at: string | undefined) {
  const [samples, setSamples] = useState<{ t: number[]; v: (number | null)[] }>({ t: [], v: [] });
  useEffect(() => {
    if (!at) return;
    const t = Date.parse(at) / 1000;
    setSamples((s) =>
      s.t[s.t.length - 1] === t
        ? s
        : { t: [...s.t, t].slice(-KEEP), v: [...s.v, value ?? null].slice(-KEEP) },
    );
  }, [value, at]);
  return samples;
}

/** Ingest health (its reasons, bitrate, frames) and the audience, charted while the page is open. */
function Health({ id }: { id: string }) {
  const api = useApi();
  const path = { params: { path: { event_id: id } } };
  const health = useQuery({
    queryKey: ['live', 'health', id],
    queryFn: () => must(api.GET('/v1/live-events/events/{event_id}/health', path)),
    refetchInterval: WATCH_MS,
  });
  const stats = useQuery({
    queryKey: ['live', 'stats', id],
    queryFn: () => must(api.GET('/v1/live-events/events/{event_id}/stats', path)),
    refetchInterval: WATCH_MS,
  });
  const h = health.data;
  const s = stats.data;
  const bitrate = useSamples(h?.bitrate_kbps, h?.checked_at);
  const viewers = useSamples(s?.current_viewers, s?.measured_at);
  return (
    <section aria-labelledby="health-heading">
      <h2 id="health-heading">Ingest health and audience</h2>
      {h && (
        <>
          <p>
            Ingest is <strong class={`health-${h.status}`}>{h.status}</strong>
            {h.bitrate_kbps !== null && `: ${h.bitrate_kbps} kbit/s`}
            {h.frame_rate !== null && `, ${h.frame_rate} fps`}
            {h.keyframe_interval_seconds !== null && `, a keyframe every ${h.keyframe_interval_seconds} s`}
            {h.dropped_frames !== null && `, ${h.dropped_frames} frames dropped`}.
          </p>
          {h.reasons.length > 0 && (
            <ul aria-label="Health findings">
              {h.reasons.map((r) => (
                <li key={r.code}>
                  <strong>{r.severity}</strong>: {r.message}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
      <div class="chart-pair">
        <figure>
          <figcaption>Ingest bitrate (kbit/s)</figcaption>
          <TimeChart
            label="Ingest bitrate over time"
            times={bitrate.t}
            series={[{ label: 'kbit/s', values: bitrate.v }]}
            height={160}
          />
        </figure>
        <figure>
          <figcaption>Viewers now</figcaption>
          <TimeChart
            label="Viewers over time"
            times={viewers.t}
            series={[{ label: 'viewers', values: viewers.v }]}
            height={160}
          />
        </figure>
      </div>
      {s && (
        <p>
          Peak {s.peak_viewers} viewers, {s.total_viewers} in all, {Math.round(s.minutes_watched)} minutes
          watched, {s.segments_served} segments served.
        </p>
      )}
    </section>
  );
}

function Sessions({ id }: { id: string }) {
  const api = useApi();
  const sessions = useQuery({
    queryKey: ['live', 'sessions', id],
    queryFn: async () =>
      (
        await must(
          api.GET('/v1/live-events/events/{event_id}/sessions', { params: { path: { event_id: id } } }),
        )
      ).sessions as unknown as Row[],
    refetchInterval: WATCH_MS,
  });
  return (
    <section aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Ingest sessions</h2>
      <DataTable
        name="sessions"
        label="Sessions"
        rows={sessions.data ?? []}
        columns={[
          { key: 'started_at', label: 'Started', render: (r) => when(r['started_at']) },
          { key: 'status', label: 'Status' },
          { key: 'duration_seconds', label: 'Seconds' },
          { key: 'bitrate_kbps', label: 'kbit/s' },
          { key: 'frame_rate', label: 'fps' },
          { key: 'end_reason', label: 'Ended because' },
        ]}
        empty={<p>No ingest yet. Point your encoder at the server above with the stream key.</p>}
      />
    </section>
  );
}

/** Recordings (MP4 downloaded through the API with the session) and the replay. */
function Recordings({ id }: { id: string }) {
  const api = useApi();
  const recordings = useQuery({
    queryKey: ['live', 'recordings', id],
    queryFn: async () =>
      (
        await must(
          api.GET('/v1/live-events/events/{event_id}/recordings', { params: { path: { event_id: id } } }),
        )
      ).recordings as unknown as Row[],
    refetchInterval: WATCH_MS * 2,
  });
  return (
    <section aria-labelledby="recordings-heading">
      <h2 id="recordings-heading">Recordings</h2>
      <DataTable
        name="recordings"
        label="Recordings"
        rows={recordings.data ?? []}
        columns={[
          { key: 'started_at', label: 'Started', render: (r) => when(r['started_at']) },
          { key: 'status', label: 'Status' },
          { key: 'format', label: 'Format' },
          { key: 'duration_seconds', label: 'Seconds' },
          { key: 'size_bytes', label: 'Bytes' },
        ]}
        actions={(r) =>
          r['format'] === 'mp4' && r['status'] === 'ready' ? (
            <button
              type="button"
              onClick={async () => {
                const { data } = await api.GET(
                  '/v1/live-events/events/{event_id}/recordings/{recording_id}/download',
                  {
                    params: { path: { event_id: id, recording_id: String(r['id']) } },
                    parseAs: 'blob',
                  },
                );
                const url = URL.createObjectURL(data as unknown as Blob);
                const a = document.createElement('a');
                a.href = url;
                a.download = `${String(r['id'])}.mp4`;
                a.click();
                setTimeout(() => URL.revokeObjectURL(url), 5000);
              }}
            >
              Download
            </button>
          ) : null
        }
        empty={
          <p>
            No recordings. With recording on, each ingest session is kept; the replay plays in the player once
            the event ends.
          </p>
        }
      />
    </section>
  );
}

/** Watch tokens of a `token` event: created with the token shown once. */
function Tokens({ id }: { id: string }) {
  const api = useApi();
  const queries = useQueryClient();
  const path = { params: { path: { event_id: id } } };
  const tokens = useQuery({
    queryKey: ['live', 'tokens', id],
    queryFn: async () =>
      (await must(api.GET('/v1/live-events/events/{event_id}/tokens', path))).tokens as unknown as Row[],
  });
  const [token, setToken] = useState<string | null>(null);
  return (
    <section aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">Watch tokens</h2>
      <Panel title="Create a watch token">
        <SchemaForm
          operationId="createLiveEventWatchToken"
          idPrefix="watch-token"
          submitLabel="Create token"
          onSubmit={async (body) => {
            const t = (await must(
              api.POST('/v1/live-events/events/{event_id}/tokens', { ...path, body: body as never }),
            )) as Row;
            setToken(String(t['token'] ?? ''));
            await queries.invalidateQueries({ queryKey: ['live', 'tokens', id] });
          }}
        />
      </Panel>
      {token && <SecretOnce label="Watch token" value={token} onDone={() => setToken(null)} />}
      <DataTable
        name="tokens"
        label="Watch tokens"
        rows={tokens.data ?? []}
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'token_prefix', label: 'Token' },
          { key: 'status', label: 'Status' },
          { key: 'use_count', label: 'Uses' },
          { key: 'max_uses', label: 'Max uses' },
          { key: 'expires_at', label: 'Expires', render: (r) => when(r['expires_at']) },
        ]}
        empty={
          <p>
            No watch tokens. A token event admits viewers who bring one (in the watch link or the access-code
            form).
          </p>
        }
      />
    </section>
  );
}
