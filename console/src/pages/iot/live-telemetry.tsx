import { useEffect, useMemo, useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { type Series, TimeChart } from '../../ui/chart.js';
import { readEvents } from '../../ui/event-stream.js';

/** Points kept per key on the live chart: the newest, older ones scroll away. */
const KEEP = 600;
/** How far back the live chart starts when the page opens. */
const SEED_MS = 15 * 60_000;

interface Point {
  ts: number;
  value: number;
}

/**
 * The device's numeric telemetry, live: the last quarter hour from the API, then each point as
 * Fjord pushes it (`GET …/telemetry/stream`, Server-Sent Events), drawn as it comes. The page
 * never polls; when the stream breaks it reconnects after a pause and says so.
 */
export function LiveTelemetry({ device, onState }: { device: string; onState?(online: boolean): void }) {
  const api = useApi();
  const [points, setPoints] = useState<Record<string, Point[]>>({});
  const [latest, setLatest] = useState<Record<string, { value: unknown; ts: number }>>({});
  const [status, setStatus] = useState('Connecting to the live stream…');
  useEffect(() => {
    const stop = new AbortController();
    const add = (key: string, value: unknown, ts: number) => {
      setLatest((l) => ({ ...l, [key]: { value, ts } }));
      if (typeof value !== 'number') return;
      setPoints((old) => {
        const line = [...(old[key] ?? []), { ts, value }];
        if (line.length > 1 && line[line.length - 2]!.ts > ts) line.sort((a, b) => a.ts - b.ts);
        return { ...old, [key]: line.slice(-KEEP) };
      });
    };
    void (async () => {
      const seed = await must(
        api.GET('/v1/iot/devices/{device_id}/telemetry', {
          params: {
            path: { device_id: device },
            query: { from: new Date(Date.now() - SEED_MS).toISOString(), limit: 2000 },
          },
        }),
      ).catch(() => null);
      for (const p of seed?.points ?? []) add(p.key, p.value, Date.parse(p.ts));
      for (let attempt = 0; !stop.signal.aborted; attempt++) {
        const { response } = await api
          .GET('/v1/iot/devices/{device_id}/telemetry/stream', {
            params: { path: { device_id: device } },
            parseAs: 'stream',
            signal: stop.signal,
          })
          .catch(() => ({ response: null }));
        if (stop.signal.aborted) return;
        if (response?.status === 404) return setStatus('The device no longer exists.');
        if (response?.ok && response.body) {
          setStatus('Live: new points appear as the device sends them.');
          let ended = false;
          await readEvents(
            response.body,
            (event, data) => {
              const d = data as { key: string; value: unknown; ts: number; is_online: boolean };
              if (event === 'telemetry') add(d.key, d.value, d.ts);
              else if (event === 'state') onState?.(d.is_online);
              else if (event === 'end') ended = true;
            },
            stop.signal,
          );
          if (ended) return setStatus('The device was deleted.');
        }
        if (stop.signal.aborted) return;
        setStatus('The live stream was interrupted; reconnecting…');
        await new Promise((r) => setTimeout(r, Math.min(30_000, 1000 * 2 ** Math.min(attempt, 5))));
      }
    })();
    return () => stop.abort();
  }, [api, device, onState]);

  const { times, series } = useMemo(() => align(points), [points]);
  const keys = Object.keys(latest).sort();
  return (
    <>
      <p role="status" class="notice">
        {status}
      </p>
      {series.length ? (
        <TimeChart
          label={`Live telemetry of ${device}: ${series.map((s) => s.label).join(', ')}`}
          times={times}
          series={series}
        />
      ) : (
        <p>
          No numeric telemetry in the last 15 minutes. Points the device publishes appear here as they arrive.
        </p>
      )}
      {keys.length > 0 && (
        <table class="latest">
          <caption>Latest values</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Value</th>
              <th scope="col">At</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k}>
                <th scope="row">{k}</th>
                <td data-key={k}>{String(latest[k]!.value)}</td>
                <td>{new Date(latest[k]!.ts).toLocaleTimeString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/** Lines by key as uPlot wants them: one sorted time axis (seconds), a value or null per line. */
export function align(lines: Record<string, Point[]>): { times: number[]; series: Series[] } {
  const keys = Object.keys(lines).sort();
  const all = [...new Set(keys.flatMap((k) => lines[k]!.map((p) => p.ts)))].sort((a, b) => a - b);
  const index = new Map(all.map((t, i) => [t, i]));
  const series = keys.map((k) => {
    const values: (number | null)[] = new Array(all.length).fill(null);
    for (const p of lines[k]!) values[index.get(p.ts)!] = p.value;
    return { label: k, values };
  });
  return { times: all.map((t) => t / 1000), series };
}
