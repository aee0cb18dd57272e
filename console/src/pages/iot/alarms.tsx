import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { Link, setQuery, useLocation } from '../../router.js';
import { DataTable, type Row, when } from '../../ui/table.js';
import { Facts, Failure, QueryView } from '../../ui/widgets.js';

const STATUSES = ['', 'active', 'acknowledged', 'resolved'] as const;

/** Alarms raised by the rules, newest first, filtered by status (in the address). */
export function AlarmsPage() {
  const api = useApi();
  const { query } = useLocation();
  const status = query.get('status') ?? '';
  const summary = useQuery({
    queryKey: ['iot', 'alarms', 'summary'],
    queryFn: () => must(api.GET('/v1/iot/alarms/summary')),
  });
  const alarms = useQuery({
    queryKey: ['iot', 'alarms', status],
    queryFn: async () =>
      (
        await must(
          api.GET('/v1/iot/alarms', {
            params: { query: { page_size: 100, ...(status ? { status: status as never } : {}) } },
          }),
        )
      ).alarms as Row[],
  });
  const s = summary.data as Row | undefined;
  return (
    <section>
      <h1>Alarms</h1>
      {s && (
        <p>
          {Object.entries((s['by_status'] ?? {}) as Record<string, number>)
            .map(([k, v]) => `${v} ${k}`)
            .join(' · ')}
        </p>
      )}
      <label>
        Status{' '}
        <select value={status} onChange={(e) => setQuery({ status: e.currentTarget.value || null })}>
          {STATUSES.map((x) => (
            <option key={x} value={x}>
              {x || 'any'}
            </option>
          ))}
        </select>
      </label>
      <QueryView query={alarms} what="alarms">
        {(data) => (
          <DataTable
            name="alarms"
            label="Alarms"
            rows={data ?? []}
            href={(r) => `/iot/alarms/${encodeURIComponent(String(r['id']))}`}
            columns={[
              { key: 'rule_name', label: 'Rule' },
              {
                key: 'severity',
                label: 'Severity',
                render: (r) => <span class={`sev-${String(r['severity'])}`}>{String(r['severity'])}</span>,
              },
              { key: 'status', label: 'Status' },
              { key: 'device_id', label: 'Device' },
              { key: 'created_at', label: 'Raised', render: (r) => when(r['created_at']) },
            ]}
            empty={<p>No alarms. Alarm rules raise them when their conditions hold.</p>}
          />
        )}
      </QueryView>
    </section>
  );
}

/** One alarm: its facts, its timeline, and acknowledge / resolve / reopen. */
export function AlarmPage({ id }: { id: string }) {
  const api = useApi();
  const queries = useQueryClient();
  const path = { params: { path: { alarm_id: id } } };
  const alarm = useQuery({
    queryKey: ['iot', 'alarm', id],
    queryFn: () => must(api.GET('/v1/iot/alarms/{alarm_id}', path)),
  });
  const timeline = useQuery({
    queryKey: ['iot', 'alarm', id, 'timeline'],
    queryFn: () => must(api.GET('/v1/iot/alarms/{alarm_id}/timeline', path)),
  });
  const [problem, setProblem] = useState<unknown>(null);
  const act = (what: 'acknowledge' | 'resolve' | 'reopen') => async () => {
    setProblem(null);
    try {
      await must(api.POST(`/v1/iot/alarms/{alarm_id}/${what}`, path));
    } catch (err) {
      setProblem(err);
    }
    await queries.invalidateQueries({ queryKey: ['iot', 'alarm', id] });
    await queries.invalidateQueries({ queryKey: ['iot', 'alarms'] });
  };
  const a = alarm.data as Row | undefined;
  return (
    <section>
      <p class="crumbs">
        <Link href="/iot/alarms">Alarms</Link> / <span>{id}</span>
      </p>
      <h1>Alarm: {a ? `${String(a['rule_name'])} on ${String(a['device_id'])}` : id}</h1>
      <QueryView query={alarm} what="the alarm">
        {() =>
          a && (
            <>
              <Facts
                data={a}
                keys={[
                  'severity',
                  'status',
                  'acknowledged',
                  'device_id',
                  'rule_name',
                  'created_at',
                  'acknowledged_at',
                  'resolved_at',
                ]}
              />
              <div class="actions">
                {a['status'] === 'active' && (
                  <button type="button" onClick={act('acknowledge')}>
                    Acknowledge
                  </button>
                )}
                {a['status'] !== 'resolved' && (
                  <button type="button" onClick={act('resolve')}>
                    Resolve
                  </button>
                )}
                {a['status'] === 'resolved' && (
                  <button type="button" onClick={act('reopen')}>
                    Reopen
                  </button>
                )}
              </div>
              {problem ? <Failure error={problem} /> : null}
              <h2>Timeline</h2>
              <ol class="timeline" aria-label="Alarm timeline">
                {(timeline.data?.events ?? []).map((e, i) => (
                  <li key={i}>
                    <time dateTime={e.at}>{when(e.at)}</time> <strong>{e.event}</strong> by {e.actor}
                    {Object.keys(e.details ?? {}).length > 0 && <code> {JSON.stringify(e.details)}</code>}
                  </li>
                ))}
              </ol>
            </>
          )
        }
      </QueryView>
    </section>
  );
}
