import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { FjordClient } from '../../../sdk/index.js';
import { must } from '../api.js';
import { SchemaForm } from '../ui/schema-form.js';
import { DataTable, type Row } from '../ui/table.js';
import { ConfirmDelete, Failure, Panel, QueryView } from '../ui/widgets.js';
import { ClusterTimeline } from './cluster-timeline.js';
import { saveFile } from './save-file.js';

type Props = { id: string; row: Row; api: FjordClient };

/** A cluster's page: its operation's timeline, access, node pools, backups and upgrades. */
export function ClusterSections({ id, row, api }: Props) {
  return (
    <>
      <section aria-labelledby="timeline-heading">
        <h2 id="timeline-heading">Timeline</h2>
        <ClusterTimeline id={id} />
      </section>
      <ClusterAccess id={id} row={row} api={api} />
      <NodePools id={id} row={row} api={api} />
      <Backups id={id} row={row} api={api} />
      <Upgrades id={id} row={row} api={api} />
    </>
  );
}

/** After a change the cluster's facts and its timeline are read again (a change starts steps). */
function useRefresh(id: string) {
  const queries = useQueryClient();
  return () =>
    Promise.all([
      queries.invalidateQueries({ queryKey: ['clusters', 'detail', id] }),
      queries.invalidateQueries({ queryKey: ['clusters', 'timeline', id] }),
    ]);
}

function ClusterAccess({ id, row, api }: Props) {
  return (
    <section aria-labelledby="kubeconfig-heading">
      <h2 id="kubeconfig-heading">Access</h2>
      <button
        type="button"
        onClick={async () => {
          const { data } = await api.GET('/v1/kubernetes/clusters/{id}/kubeconfig', {
            params: { path: { id } },
            parseAs: 'text',
          });
          saveFile(`${String(row['name'])}.kubeconfig.yaml`, String(data ?? ''), 'application/yaml');
        }}
      >
        Download kubeconfig
      </button>
    </section>
  );
}

interface Pool {
  name: string;
  plan_code: string;
  count: number;
  status: string;
  nodes_seen: number;
}

function NodePools({ id, row, api }: Props) {
  const refresh = useRefresh(id);
  const pools = (row['node_pools'] ?? []) as Pool[];
  const plans = useQuery({
    queryKey: ['clusters', 'node-plans'],
    queryFn: async () =>
      (await must(api.GET('/v1/kubernetes/plans'))).plans
        .filter((p) => p.kind === 'node')
        .map((p) => p.plan_code),
    staleTime: 60_000,
  });
  return (
    <section aria-labelledby="pools-heading">
      <h2 id="pools-heading">Node pools</h2>
      <Panel title="Add a node pool">
        <SchemaForm
          operationId="k8sAddNodePool"
          fields={['name', 'plan_code', 'count']}
          labels={{ plan_code: 'Plan', count: 'Nodes' }}
          options={plans.data ? { plan_code: plans.data } : {}}
          optionsLoading={plans.isLoading}
          submitLabel="Add node pool"
          onSubmit={async (body) => {
            await must(
              api.POST('/v1/kubernetes/clusters/{id}/node-pools', {
                params: { path: { id } },
                body: body as never,
              }),
            );
            await refresh();
          }}
        />
      </Panel>
      <DataTable
        name="pools"
        label="Node pools"
        rows={pools as unknown as Row[]}
        columns={[
          { key: 'name', label: 'Pool' },
          { key: 'plan_code', label: 'Plan' },
          { key: 'count', label: 'Nodes' },
          { key: 'nodes_seen', label: 'Nodes up' },
          { key: 'status', label: 'Status' },
        ]}
        actions={(r) => <PoolActions id={id} pool={r as unknown as Pool} api={api} last={pools.length < 2} />}
        empty={<p>No node pools. Add one: workloads need nodes to run on.</p>}
      />
    </section>
  );
}

/** Resize a pool to a number of nodes, or remove it (the last pool stays: a cluster needs one). */
function PoolActions({ id, pool, api, last }: { id: string; pool: Pool; api: FjordClient; last: boolean }) {
  const refresh = useRefresh(id);
  const [count, setCount] = useState(String(pool.count));
  const [problem, setProblem] = useState<unknown>(null);
  const field = `pool-${pool.name}-count`;
  return (
    <div class="row-actions">
      <form
        class="inline"
        onSubmit={async (e) => {
          e.preventDefault();
          setProblem(null);
          try {
            await must(
              api.POST('/v1/kubernetes/clusters/{id}/node-pools/{pool}/scale', {
                params: { path: { id, pool: pool.name } },
                body: { count: Number(count) },
              }),
            );
            await refresh();
          } catch (err) {
            setProblem(err);
          }
        }}
      >
        <label for={field}>Nodes in {pool.name}</label>
        <input
          id={field}
          type="number"
          min={0}
          value={count}
          onInput={(e) => setCount(e.currentTarget.value)}
          size={4}
        />
        {/* One change at a time: Fjord refuses a resize while the pool still scales or drains. */}
        <button type="submit" disabled={pool.status === 'scaling' || pool.status === 'draining'}>
          Resize {pool.name}
        </button>
      </form>
      {!last && (
        <ConfirmDelete
          name={pool.name}
          what="node pool"
          action="Remove"
          onConfirm={async () => {
            await must(
              api.DELETE('/v1/kubernetes/clusters/{id}/node-pools/{pool}', {
                params: { path: { id, pool: pool.name } },
              }),
            );
            await refresh();
          }}
        />
      )}
      {problem ? <Failure error={problem} /> : null}
    </div>
  );
}

/** Looks again when Fjord says something changes next; not at all once nothing moves. */
const whenNext = (seconds: number | null | undefined) =>
  seconds === null || seconds === undefined ? false : Math.min(30_000, Math.max(1000, seconds * 1000 + 250));

function Backups({ id, api }: Props) {
  const queries = useQueryClient();
  const [problem, setProblem] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const backups = useQuery({
    queryKey: ['clusters', 'backups', id],
    queryFn: async () =>
      (await must(api.GET('/v1/kubernetes/clusters/{id}/backups', { params: { path: { id } } }))).backups,
    // A backup in progress completes on the clock; look again every few seconds until none is.
    refetchInterval: (q) => (q.state.data?.some((b) => b.status === 'InProgress') ? 3000 : false),
  });
  const restores = useQuery({
    queryKey: ['clusters', 'restores', id],
    queryFn: async () =>
      (await must(api.GET('/v1/kubernetes/clusters/{id}/restores', { params: { path: { id } } }))).restores,
    refetchInterval: (q) => whenNext(q.state.data?.[0]?.next_change_in_seconds),
  });
  const act = (what: () => Promise<unknown>, done: string) => async () => {
    setProblem(null);
    setNotice('');
    try {
      await what();
      setNotice(done);
    } catch (err) {
      setProblem(err);
    }
    await queries.invalidateQueries({ queryKey: ['clusters', 'backups', id] });
    await queries.invalidateQueries({ queryKey: ['clusters', 'restores', id] });
  };
  const restore = restores.data?.[0];
  return (
    <section aria-labelledby="backups-heading">
      <h2 id="backups-heading">Backups</h2>
      <div class="actions">
        <button
          type="button"
          onClick={act(
            () =>
              must(api.POST('/v1/kubernetes/clusters/{id}/backups', { params: { path: { id } }, body: {} })),
            'A backup was started.',
          )}
        >
          Back up now
        </button>
      </div>
      <p role="status" class="notice">
        {notice}
      </p>
      {problem ? <Failure error={problem} /> : null}
      {restore && (
        <div class="restore">
          <p role="status">
            Restore {restore.name}:{' '}
            {restore.status === 'Completed' ? 'completed' : `${restore.progress_percent}% done`}.
          </p>
          <progress
            max={100}
            value={restore.progress_percent}
            aria-label={`Restore ${restore.name} progress`}
          />
        </div>
      )}
      <QueryView query={backups} what="backups">
        {(list) => (
          <DataTable
            name="backups"
            label="Backups"
            rows={list as unknown as Row[]}
            columns={[
              { key: 'name', label: 'Backup' },
              { key: 'kind', label: 'Kind' },
              { key: 'status', label: 'Status' },
              { key: 'items_count', label: 'Items' },
              { key: 'started_at', label: 'Started' },
              { key: 'expires_at', label: 'Expires' },
            ]}
            actions={(r) => (
              <button
                type="button"
                aria-label={`Restore ${String(r['name'])}`}
                disabled={r['status'] !== 'Completed' || restore?.status === 'InProgress'}
                onClick={act(
                  () =>
                    must(
                      api.POST('/v1/kubernetes/clusters/{id}/backups/{backup}/restore', {
                        params: { path: { id, backup: String(r['id']) } },
                        body: {},
                      }),
                    ),
                  `Restoring ${String(r['name'])}.`,
                )}
              >
                Restore
              </button>
            )}
            empty={<p>No backups yet. Back up now, or set a schedule through the API.</p>}
          />
        )}
      </QueryView>
    </section>
  );
}

/** The versions this cluster may move to; the upgrade's steps then show in the timeline above. */
function Upgrades({ id, row, api }: Props) {
  const refresh = useRefresh(id);
  const [problem, setProblem] = useState<unknown>(null);
  const [version, setVersion] = useState('');
  const targets = useQuery({
    queryKey: ['clusters', 'upgrades', id, row['version'], row['status']],
    queryFn: async () =>
      (await must(api.GET('/v1/kubernetes/clusters/{id}/upgrade', { params: { path: { id } } }))).versions,
  });
  return (
    <section aria-labelledby="upgrade-heading">
      <h2 id="upgrade-heading">Upgrade</h2>
      <p>The cluster runs Kubernetes {String(row['version'])}.</p>
      <QueryView query={targets} what="the versions available">
        {(versions) =>
          versions.length === 0 ? (
            <p>No newer version is available for this cluster now.</p>
          ) : (
            <form
              class="inline"
              onSubmit={async (e) => {
                e.preventDefault();
                setProblem(null);
                try {
                  await must(
                    api.POST('/v1/kubernetes/clusters/{id}/upgrade', {
                      params: { path: { id } },
                      body: { version: version || versions[0]! },
                    }),
                  );
                  await refresh();
                } catch (err) {
                  setProblem(err);
                }
              }}
            >
              <label for="upgrade-version">Version</label>
              <select
                id="upgrade-version"
                value={version || versions[0]}
                onChange={(e) => setVersion(e.currentTarget.value)}
              >
                {versions.map((v) => (
                  <option key={v} value={v}>
                    {v}
                  </option>
                ))}
              </select>
              <button type="submit">Start upgrade</button>
            </form>
          )
        }
      </QueryView>
      {problem ? <Failure error={problem} /> : null}
    </section>
  );
}
