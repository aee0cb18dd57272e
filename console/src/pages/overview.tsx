import { useQuery } from '@tanstack/preact-query';
import type { FjordClient } from '../../../sdk/index.js';
import { must } from '../api.js';
import { useApi } from '../context.js';
import { Link } from '../router.js';
import { DataTable, type Row } from '../ui/table.js';
import { QueryView } from '../ui/widgets.js';

/** This month's usage of the areas that meter it: a line per area, each fetched on its own. */
async function usage(api: FjordClient): Promise<{ area: string; href: string; facts: [string, string][] }[]> {
  const out: { area: string; href: string; facts: [string, string][] }[] = [];
  const settled = await Promise.allSettled([
    must(api.GET('/v1/dns/usage')).then((u) =>
      out.push({
        area: 'DNS',
        href: '/dns',
        facts: [
          ['Plan', u.plan],
          ['Zones', `${u.zones.used}${u.zones.limit !== null ? ` of ${u.zones.limit}` : ''}`],
          ['Queries', `${u.queries.used}${u.queries.limit !== null ? ` of ${u.queries.limit}` : ''}`],
        ],
      }),
    ),
    must(api.GET('/v1/sms/usage', {})).then((u) =>
      out.push({
        area: 'SMS',
        href: '/sms',
        facts: [
          ['Sent', String(u.messages_sent)],
          ['Received', String(u.messages_received)],
          ['Cost', `${u.cost} ${u.currency}`],
        ],
      }),
    ),
    must(api.GET('/v1/iot/usage')).then((u) =>
      out.push({
        area: 'IoT',
        href: '/iot',
        facts: [
          ['Devices', String(u.devices)],
          ['Messages', String(u.messages)],
          ['Points stored', String(u.points_stored)],
        ],
      }),
    ),
    must(api.GET('/v1/llm/usage', {})).then((u) =>
      out.push({
        area: 'Language models',
        href: '/llm',
        facts: [
          ['Requests', String(u.data.reduce((n, d) => n + d.requests, 0))],
          ['Tokens', String(u.data.reduce((n, d) => n + d.total_tokens, 0))],
        ],
      }),
    ),
  ]);
  void settled; // an area the customer has no service for answers 403: it is simply left out
  return out.sort((a, b) => a.area.localeCompare(b.area));
}

/** Which back ends are simulated on this install, as the services' metadata says. */
function simulatedOf(services: Row[]): string[] {
  const found = new Set<string>();
  for (const s of services) {
    const meta = (s['metadata'] ?? {}) as Record<string, unknown>;
    for (const [k, v] of Object.entries(meta))
      if (v === 'simulated' || (k === 'simulated' && v === true)) found.add(`${String(s['name'])} (${k})`);
  }
  return [...found].sort();
}

/** The account at a glance: its services, what is simulated here, and this month's usage. */
export function Overview() {
  const api = useApi();
  const services = useQuery({
    queryKey: ['overview', 'services'],
    queryFn: async () => (await must(api.GET('/v1/account/services'))) as unknown as Row[],
  });
  const month = useQuery({ queryKey: ['overview', 'usage'], queryFn: () => usage(api) });
  const simulated = services.data ? simulatedOf(services.data) : [];
  return (
    <section>
      <h1>Overview</h1>
      <section aria-labelledby="services-heading">
        <h2 id="services-heading">Your services</h2>
        <QueryView query={services} what="services">
          {(data) => (
            <DataTable
              name="services"
              label="Services"
              rows={data ?? []}
              columns={[
                { key: 'name', label: 'Name' },
                { key: 'service_type', label: 'Type' },
                { key: 'status', label: 'Status' },
                { key: 'region', label: 'Region' },
              ]}
              empty={<p>No services yet. Pick an area on the left to create the first resource.</p>}
            />
          )}
        </QueryView>
      </section>
      <section aria-labelledby="simulated-heading">
        <h2 id="simulated-heading">Simulated on this install</h2>
        {services.data &&
          (simulated.length === 0 ? (
            <p>Nothing your services use is simulated: every back end is real.</p>
          ) : (
            <>
              <p>These back ends follow the API’s states and timings without a real system behind them:</p>
              <ul>
                {simulated.map((s) => (
                  <li key={s}>{s}</li>
                ))}
              </ul>
            </>
          ))}
      </section>
      <section aria-labelledby="usage-heading">
        <h2 id="usage-heading">This month’s usage</h2>
        <QueryView query={month} what="usage">
          {(areas) => (
            <div class="cards">
              {areas?.map((u) => (
                <article class="card" key={u.area} aria-labelledby={`usage-${u.href.slice(1)}`}>
                  <h3 id={`usage-${u.href.slice(1)}`}>
                    <Link href={u.href}>{u.area}</Link>
                  </h3>
                  <dl class="facts">
                    {u.facts.map(([k, v]) => (
                      <div key={k}>
                        <dt>{k}</dt>
                        <dd>{v}</dd>
                      </div>
                    ))}
                  </dl>
                </article>
              ))}
            </div>
          )}
        </QueryView>
      </section>
    </section>
  );
}
