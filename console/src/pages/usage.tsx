import { useQuery } from '@tanstack/preact-query';
import type { FjordClient } from '../../../sdk/index.js';
import { must } from '../api.js';
import { useApi } from '../context.js';
import { type Series, TimeChart } from '../ui/chart.js';
import { QueryView } from '../ui/widgets.js';

interface AreaUsage {
  area: string;
  measures: [string, number][];
  cost: number | null;
  currency: string | null;
  /** A cost in several currencies, one of which the page picks. */
  costs?: Record<string, number>;
}

/**
 * This month's usage of each area that meters it, with its cost where the area prices it. Each
 * area is asked on its own; one the account has no service for answers 403 and is left out.
 */
async function usage(api: FjordClient): Promise<AreaUsage[]> {
  const now = new Date();
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
  const out: AreaUsage[] = [];
  await Promise.allSettled([
    must(api.GET('/v1/sms/usage', {})).then((u) =>
      out.push({
        area: 'SMS',
        measures: [
          ['messages sent', u.messages_sent],
          ['messages received', u.messages_received],
        ],
        cost: u.cost,
        currency: u.currency,
      }),
    ),
    must(api.GET('/v1/llm/usage', { params: { query: { from } } })).then((u) =>
      out.push({
        area: 'Language models',
        measures: [
          ['requests', u.data.reduce((n, d) => n + d.requests, 0)],
          ['tokens', u.data.reduce((n, d) => n + d.total_tokens, 0)],
        ],
        // The gateway prices in every currency; the page shows the one the account's other costs use.
        cost: null,
        currency: null,
        costs: u.data.reduce<Record<string, number>>((sum, d) => {
          for (const [c, v] of Object.entries(d.cost ?? {})) sum[c] = (sum[c] ?? 0) + v;
          return sum;
        }, {}),
      }),
    ),
    must(api.GET('/v1/iot/usage')).then((u) =>
      out.push({
        area: 'IoT',
        measures: [
          ['devices', u.devices],
          ['messages', u.messages],
          ['points stored', u.points_stored],
        ],
        cost: null,
        currency: null,
      }),
    ),
    must(api.GET('/v1/dns/usage')).then((u) =>
      out.push({
        area: 'DNS',
        measures: [
          ['queries', u.queries.used],
          ['zones', u.zones.used],
        ],
        cost: null,
        currency: null,
      }),
    ),
  ]);
  const currency = out.find((r) => r.currency)?.currency ?? 'EUR';
  for (const r of out)
    if (r.costs) {
      r.cost = r.costs[currency] ?? null;
      r.currency = r.cost === null ? null : currency;
    }
  return out.sort((a, b) => a.area.localeCompare(b.area));
}

/** Days of this month so far, as `[start, end)` in epoch milliseconds (UTC days, as the areas bill). */
function daysSoFar(): [number, number][] {
  const now = new Date();
  const first = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  const out: [number, number][] = [];
  for (let d = first; d <= now.getTime(); d += 86_400_000) out.push([d, d + 86_400_000]);
  return out;
}

/**
 * Cost per day of this month, per priced area, in the account's currency: SMS from the month's
 * messages (the units of those sent, at the month's price per unit), language models from the gateway's usage
 * asked day by day. An area the account does not use is left out.
 */
async function daily(api: FjordClient, currency: string): Promise<{ days: number[]; series: Series[] }> {
  const days = daysSoFar();
  const series: Series[] = [];
  const monthStart = new Date(days[0]![0]).toISOString();
  const sms = await must(api.GET('/v1/sms/usage', {})).catch(() => null);
  if (sms) {
    const perDay = days.map(() => 0);
    for (let page = 1; page <= 50; page++) {
      const list = await must(
        api.GET('/v1/sms/messages', { params: { query: { date_from: monthStart, page, page_size: 200 } } }),
      );
      for (const m of list.messages) {
        // Billed when handed to the network, as the month's usage counts them.
        if (!m.sent_at) continue;
        const at = Date.parse(m.sent_at);
        const i = days.findIndex(([a, b]) => at >= a && at < b);
        if (i >= 0 && m.direction === 'OUTBOUND') perDay[i]! += (m.units_count ?? 1) * sms.price_per_unit;
      }
      if (!list.has_more) break;
    }
    series.push({ label: `SMS (${sms.currency})`, values: perDay });
  }
  const llm = await Promise.all(
    days.map(([a, b]) =>
      must(
        api.GET('/v1/llm/usage', {
          params: { query: { from: new Date(a).toISOString(), to: new Date(b).toISOString() } },
        }),
      ).catch(() => null),
    ),
  );
  if (llm.some((u) => u !== null))
    series.push({
      label: `Language models (${currency})`,
      values: llm.map(
        (u) => u?.data.reduce((n, d) => n + ((d.cost as Record<string, number>)[currency] ?? 0), 0) ?? null,
      ),
    });
  return { days: days.map(([a]) => a / 1000), series };
}

/** Usage and costs: this month, per area, as a chart and a table. */
export function UsagePage() {
  const api = useApi();
  const month = useQuery({ queryKey: ['usage', 'month'], queryFn: () => usage(api) });
  const rows = month.data ?? [];
  const currency = rows.find((r) => r.currency)?.currency ?? '';
  const perDay = useQuery({
    queryKey: ['usage', 'daily', currency],
    queryFn: () => daily(api, currency || 'EUR'),
    enabled: !!month.data,
  });
  const priced = rows.filter((r) => r.cost !== null);
  return (
    <section>
      <h1>Usage and costs</h1>
      <p class="intro">
        This month’s usage of each area, and its cost where the area prices it
        {currency ? `, in ${currency}` : ''}.
      </p>
      <QueryView query={month} what="usage">
        {() => (
          <>
            {priced.length > 0 && (
              <figure>
                <figcaption>Cost this month by area{currency ? ` (${currency})` : ''}</figcaption>
                <ul class="bars">
                  {priced.map((r) => (
                    <li key={r.area}>
                      <span class="bar-label">{r.area}</span>
                      <span
                        class="bar"
                        style={{
                          width: `${(100 * (r.cost ?? 0)) / Math.max(...priced.map((p) => p.cost ?? 0), 1e-9)}%`,
                        }}
                      />
                      <span class="bar-value">
                        {(r.cost ?? 0).toFixed(2)} {currency}
                      </span>
                    </li>
                  ))}
                </ul>
              </figure>
            )}
            <figure>
              <figcaption>Cost per day{currency ? ` (${currency})` : ''}</figcaption>
              <QueryView query={perDay} what="the days">
                {(d) =>
                  d?.series.length ? (
                    <TimeChart
                      label={`Cost per day this month: ${d.series.map((x) => `${x.label} ${x.values.reduce<number>((n, v) => n + (v ?? 0), 0).toFixed(2)}`).join(', ')}`}
                      times={d.days}
                      series={d.series}
                      bars
                      height={200}
                    />
                  ) : (
                    <p>No priced usage this month.</p>
                  )
                }
              </QueryView>
            </figure>
            <table>
              <caption>Usage this month</caption>
              <thead>
                <tr>
                  <th scope="col">Area</th>
                  <th scope="col">Usage</th>
                  <th scope="col">Cost</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.area}>
                    <th scope="row">{r.area}</th>
                    <td>{r.measures.map(([k, v]) => `${v} ${k}`).join(', ')}</td>
                    <td>
                      {r.cost === null ? 'not priced' : `${r.cost.toFixed(2)} ${r.currency ?? currency}`}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </QueryView>
    </section>
  );
}
