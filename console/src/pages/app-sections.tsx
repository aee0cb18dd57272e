import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { FjordClient } from '../../../sdk/index.js';
import { must } from '../api.js';
import { TimeChart } from '../ui/chart.js';
import { DataTable, type Row } from '../ui/table.js';
import { ConfirmDelete, Facts, Failure, Panel, QueryView } from '../ui/widgets.js';
import { ImageDeployForm } from './app-image.js';
import { LogStream } from './app-logs.js';

type Props = { id: string; row: Row; api: FjordClient };

/** While something on the app moves (a deploy, a certificate), its lists are read again this often. */
const MOVING_MS = 3000;

/** A container app's page: deploy, revisions and rollback, instances, domains, metrics, logs. */
export function AppSections({ id, row, api }: Props) {
  return (
    <>
      <Revisions id={id} row={row} api={api} />
      <Instances id={id} row={row} api={api} />
      <Domains id={id} row={row} api={api} />
      <Metrics id={id} row={row} api={api} />
      <Logs id={id} row={row} api={api} />
    </>
  );
}

function useRefresh(id: string) {
  const queries = useQueryClient();
  return () =>
    Promise.all([
      queries.invalidateQueries({ queryKey: ['apps', 'detail', id] }),
      queries.invalidateQueries({ queryKey: ['apps', 'revisions', id] }),
      queries.invalidateQueries({ queryKey: ['apps', 'instances', id] }),
    ]);
}

function Revisions({ id, api }: Props) {
  const refresh = useRefresh(id);
  const [problem, setProblem] = useState<unknown>(null);
  const revisions = useQuery({
    queryKey: ['apps', 'revisions', id],
    queryFn: async () =>
      (await must(api.GET('/v1/apps/{app_id}/revisions', { params: { path: { app_id: id } } }))).revisions,
    refetchInterval: (q) => (q.state.data?.some((r) => r.status === 'deploying') ? MOVING_MS : false),
  });
  return (
    <section aria-labelledby="revisions-heading">
      <h2 id="revisions-heading">Revisions</h2>
      <Panel title="Deploy a new revision">
        <ImageDeployForm
          idPrefix="deploy"
          submitLabel="Deploy revision"
          deploy={async (image) => {
            await must(
              api.POST('/v1/apps/{app_id}/revisions', {
                params: { path: { app_id: id } },
                body: { image } as never,
              }),
            );
            await refresh();
          }}
        />
      </Panel>
      {problem ? <Failure error={problem} /> : null}
      <QueryView query={revisions} what="revisions">
        {(list) => (
          <DataTable
            name="revisions"
            label="Revisions"
            rows={list as unknown as Row[]}
            columns={[
              { key: 'number', label: 'Revision' },
              { key: 'status', label: 'Status' },
              { key: 'serving', label: 'Serving', render: (r) => (r['serving'] ? 'yes' : 'no') },
              { key: 'image', label: 'Image' },
              { key: 'created_at', label: 'Created' },
            ]}
            actions={(r) =>
              r['serving'] || r['status'] === 'deploying' || r['status'] === 'failed' ? null : (
                <button
                  type="button"
                  onClick={async () => {
                    setProblem(null);
                    try {
                      await must(
                        api.POST('/v1/apps/{app_id}/rollback', {
                          params: { path: { app_id: id } },
                          body: { revision_id: String(r['id']) },
                        }),
                      );
                    } catch (err) {
                      setProblem(err);
                    }
                    await refresh();
                  }}
                >
                  Roll back to revision {String(r['number'])}
                </button>
              )
            }
            empty={<p>No revisions yet: deploy one.</p>}
          />
        )}
      </QueryView>
    </section>
  );
}

/** The app's instances, read by the instances table and the log stream (one query, shared). */
function useInstances(id: string, api: FjordClient) {
  return useQuery({
    queryKey: ['apps', 'instances', id],
    queryFn: async () =>
      (await must(api.GET('/v1/apps/{app_id}/instances', { params: { path: { app_id: id } } }))).instances,
    refetchInterval: 15_000,
  });
}

/**
 * The log stream follows the instances that ran when it opened, and ends when they stop. A new
 * set of instances (a deploy from this page, a start from zero) opens it again, so the lines of
 * the revision being deployed stream in without a reload.
 */
function Logs({ id, api }: Props) {
  const instances = useInstances(id, api);
  const running = (instances.data ?? [])
    .map((i) => i.id)
    .sort()
    .join(' ');
  return (
    <section aria-labelledby="logs-heading">
      <h2 id="logs-heading">Logs</h2>
      {/* Opened once the instances are known, so a page load opens one stream, not two. */}
      {instances.isPending ? <p role="status">Connecting…</p> : <LogStream key={running} app={id} />}
    </section>
  );
}

function Instances({ id, api }: Props) {
  const instances = useInstances(id, api);
  return (
    <section aria-labelledby="instances-heading">
      <h2 id="instances-heading">Instances</h2>
      <QueryView query={instances} what="instances">
        {(list) => (
          <DataTable
            name="instances"
            label="Instances"
            rows={list as unknown as Row[]}
            columns={[
              { key: 'id', label: 'Instance' },
              { key: 'revision_number', label: 'Revision' },
              { key: 'state', label: 'State' },
              { key: 'started_at', label: 'Started' },
              { key: 'status_message', label: 'Status' },
            ]}
            empty={<p>No instance runs now. A request to the app’s address starts one.</p>}
          />
        )}
      </QueryView>
    </section>
  );
}

/** Custom domains: the CNAME to create, the domain's status and its certificate's. */
function Domains({ id, api }: Props) {
  const queries = useQueryClient();
  const [host, setHost] = useState('');
  const [problem, setProblem] = useState<unknown>(null);
  const key = ['apps', 'domains', id];
  const domains = useQuery({
    queryKey: key,
    queryFn: async () =>
      (await must(api.GET('/v1/apps/{app_id}/domains', { params: { path: { app_id: id } } }))).domains,
    refetchInterval: (q) =>
      q.state.data?.some((d) => /pending|issuing/i.test(`${d.status} ${d.certificate_status}`))
        ? MOVING_MS
        : false,
  });
  const run = async (what: () => Promise<unknown>) => {
    setProblem(null);
    try {
      await what();
    } catch (err) {
      setProblem(err);
    }
    await queries.invalidateQueries({ queryKey: key });
  };
  return (
    <section aria-labelledby="domains-heading">
      <h2 id="domains-heading">Custom domains</h2>
      <form
        class="inline"
        onSubmit={async (e) => {
          e.preventDefault();
          await run(async () => {
            await must(
              api.POST('/v1/apps/{app_id}/domains', {
                params: { path: { app_id: id } },
                body: { host_name: host.trim() },
              }),
            );
            setHost('');
          });
        }}
      >
        <label for="app-domain">Host name</label>
        <input
          id="app-domain"
          required
          placeholder="www.example.com"
          value={host}
          onInput={(e) => setHost(e.currentTarget.value)}
        />
        <button type="submit">Add domain</button>
      </form>
      {problem ? <Failure error={problem} /> : null}
      <QueryView query={domains} what="domains">
        {(list) => (
          <DataTable
            name="domains"
            label="Custom domains"
            rows={list as unknown as Row[]}
            columns={[
              { key: 'host_name', label: 'Host name' },
              { key: 'cname_target', label: 'CNAME to' },
              { key: 'status', label: 'Status' },
              { key: 'certificate_status', label: 'Certificate' },
              { key: 'certificate_expires_at', label: 'Certificate expires' },
              { key: 'status_message', label: 'Details', prose: true },
            ]}
            actions={(d) => (
              <div class="row-actions">
                <button
                  type="button"
                  aria-label={`Check ${String(d['host_name'])}`}
                  onClick={() =>
                    run(() =>
                      must(
                        api.POST('/v1/apps/{app_id}/domains/{domain_id}/check', {
                          params: { path: { app_id: id, domain_id: String(d['id']) } },
                        }),
                      ),
                    )
                  }
                >
                  Check
                </button>
                <ConfirmDelete
                  name={String(d['host_name'])}
                  what="domain"
                  action="Remove"
                  onConfirm={async () => {
                    await must(
                      api.DELETE('/v1/apps/{app_id}/domains/{domain_id}', {
                        params: { path: { app_id: id, domain_id: String(d['id']) } },
                      }),
                    );
                    await queries.invalidateQueries({ queryKey: key });
                  }}
                />
              </div>
            )}
            empty={<p>No custom domains. Add one, then point its CNAME at the target shown.</p>}
          />
        )}
      </QueryView>
    </section>
  );
}

/** The last hour's requests and errors per minute, and latency, read again every minute. */
function Metrics({ id, api }: Props) {
  const metrics = useQuery({
    queryKey: ['apps', 'metrics', id],
    queryFn: () =>
      must(
        api.GET('/v1/apps/{app_id}/metrics', { params: { path: { app_id: id }, query: { window: 3600 } } }),
      ),
    refetchInterval: 60_000,
  });
  return (
    <section aria-labelledby="metrics-heading">
      <h2 id="metrics-heading">Metrics</h2>
      <QueryView query={metrics} what="metrics">
        {(m) => (
          <>
            <Facts
              data={{
                requests: m.requests,
                errors: m.errors,
                latency_p50_ms: m.latency_ms.p50,
                latency_p95_ms: m.latency_ms.p95,
              }}
            />
            <TimeChart
              label={`Requests and errors per minute, last hour: ${m.requests} requests, ${m.errors} errors`}
              times={m.per_minute.map((p) => Date.parse(p.minute) / 1000)}
              series={[
                { label: 'Requests', values: m.per_minute.map((p) => p.requests) },
                { label: 'Errors', values: m.per_minute.map((p) => p.errors) },
              ]}
              bars
            />
          </>
        )}
      </QueryView>
    </section>
  );
}
