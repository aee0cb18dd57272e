import { useQuery } from '@tanstack/preact-query';
import { useEffect, useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { TimeChart } from '../../ui/chart.js';
import { DataTable, type Row, when } from '../../ui/table.js';
import { SecretOnce } from '../../ui/widgets.js';

// The encoder's side of a live event's page: where to send the stream, how healthy the ingest is
// (with the audience beside it), and the ingest sessions so far.

/** How often the page asks for the event's health and audience while it is open. */
export const WATCH_MS = 5_000;
/** Samples kept for the health and audience charts (an hour at one every 5 s). */
const KEEP = 720;

/** Where the encoder sends the stream, for OBS and ffmpeg, and the stream key's rotation. */
export function Ingest({ id }: { id: string }) {
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
export function Health({ id }: { id: string }) {
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

export function Sessions({ id }: { id: string }) {
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
