import { useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { TimeChart } from '../../ui/chart.js';
import { QueryView } from '../../ui/widgets.js';
import { align } from './live-telemetry.js';

const RANGES = [
  { label: 'Last hour', seconds: 3600 },
  { label: 'Last 6 hours', seconds: 6 * 3600 },
  { label: 'Last 24 hours', seconds: 86400 },
  { label: 'Last 7 days', seconds: 7 * 86400 },
  { label: 'Last 30 days', seconds: 30 * 86400 },
];
const INTERVALS = [
  { label: '1 minute', seconds: 60 },
  { label: '5 minutes', seconds: 300 },
  { label: '1 hour', seconds: 3600 },
  { label: '1 day', seconds: 86400 },
];
const AGGREGATIONS = ['avg', 'min', 'max', 'sum', 'count'] as const;

/** Aggregated history from the API (`aggregation`, `interval`), with its pickers. */
export function TelemetryHistory({ device }: { device: string }) {
  const api = useApi();
  const [range, setRange] = useState(86400);
  const [interval, setStep] = useState(3600);
  const [aggregation, setAggregation] = useState<(typeof AGGREGATIONS)[number]>('avg');
  const history = useQuery({
    queryKey: ['iot', 'history', device, range, interval, aggregation],
    // Aggregates change slowly: a minute between refreshes (the live chart above has each point).
    refetchInterval: 60_000,
    queryFn: async () => {
      const now = Date.now();
      return must(
        api.GET('/v1/iot/devices/{device_id}/telemetry', {
          params: {
            path: { device_id: device },
            query: {
              from: new Date(now - range * 1000).toISOString(),
              to: new Date(now).toISOString(),
              aggregation,
              interval,
              limit: 10000,
            },
          },
        }),
      );
    },
  });
  const lines: Record<string, { ts: number; value: number }[]> = {};
  for (const p of history.data?.points ?? []) {
    if (typeof p.value !== 'number') continue;
    lines[p.key] ??= [];
    lines[p.key]!.push({ ts: Date.parse(p.ts), value: p.value });
  }
  const { times, series } = align(lines);
  return (
    <>
      <div class="pickers">
        <label>
          Range{' '}
          <select
            value={range}
            onChange={(e) => {
              const r = Number(e.currentTarget.value);
              setRange(r);
              // An interval as long as the range would be one bar: the finest that fits instead.
              if (interval >= r) setStep(INTERVALS.filter((i) => i.seconds < r).at(-1)!.seconds);
            }}
          >
            {RANGES.map((r) => (
              <option key={r.seconds} value={r.seconds}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Interval{' '}
          <select value={interval} onChange={(e) => setStep(Number(e.currentTarget.value))}>
            {INTERVALS.filter((i) => i.seconds < range).map((i) => (
              <option key={i.seconds} value={i.seconds}>
                {i.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Aggregation{' '}
          <select
            value={aggregation}
            onChange={(e) => setAggregation(e.currentTarget.value as (typeof AGGREGATIONS)[number])}
          >
            {AGGREGATIONS.map((a) => (
              <option key={a}>{a}</option>
            ))}
          </select>
        </label>
      </div>
      <QueryView query={history} what="history">
        {() =>
          series.length ? (
            <TimeChart
              label={`Telemetry history of ${device} (${aggregation} per interval)`}
              times={times}
              series={series}
              bars={times.length < 40}
            />
          ) : (
            <p>No numeric telemetry in this range.</p>
          )
        }
      </QueryView>
    </>
  );
}
