import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useEffect, useRef } from 'preact/hooks';
import { must } from '../api.js';
import { useApi } from '../context.js';
import { Failure, Loading } from '../ui/widgets.js';

const OPERATION = { provision: 'Provisioning', upgrade: 'Upgrade', delete: 'Deletion' } as const;
const STATE = { done: 'done', current: 'in progress', pending: 'waiting', failed: 'failed' } as const;

/** Never sooner than this (a step that ends "now" is looked at once it has), never later than that. */
const MIN_WAIT_MS = 1000;
const MAX_WAIT_MS = 30_000;

/**
 * A cluster's long operation as a live timeline: its steps, each done, in progress, waiting or
 * failed, with their times. Fjord says when the next step changes (`next_change_in_seconds`), so
 * the page looks again exactly then — no polling loop — and not at all once nothing moves. When
 * a step changes, the cluster's own facts (status, nodes) are fetched again too.
 */
export function ClusterTimeline({ id }: { id: string }) {
  const api = useApi();
  const queries = useQueryClient();
  const timeline = useQuery({
    queryKey: ['clusters', 'timeline', id],
    queryFn: () => must(api.GET('/v1/kubernetes/clusters/{id}/timeline', { params: { path: { id } } })),
    refetchInterval: (q) => {
      const next = q.state.data?.next_change_in_seconds;
      if (next === null || next === undefined) return false;
      return Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, next * 1000 + 250));
    },
  });
  const data = timeline.data;
  const current = data?.steps.find((s) => s.state === 'current' || s.state === 'failed')?.name ?? null;
  const last = useRef<string | null | undefined>(undefined);
  useEffect(() => {
    if (last.current !== undefined && last.current !== current)
      void queries.invalidateQueries({ queryKey: ['clusters', 'detail', id] });
    last.current = current;
  }, [current, id, queries]);

  if (timeline.isLoading) return <Loading what="the timeline" />;
  if (timeline.error) return <Failure error={timeline.error} />;
  if (!data) return null;
  const done = data.steps.filter((s) => s.state === 'done').length;
  const moving = data.next_change_in_seconds !== null;
  return (
    <>
      <p role="status">
        {OPERATION[data.operation]}: {done} of {data.steps.length} steps done
        {current ? `, now ${current}` : ''}
        {moving ? '' : ` (the cluster is ${data.status})`}.
      </p>
      <progress
        max={data.steps.length}
        value={done}
        aria-label={`${OPERATION[data.operation]} progress`}
        class="timeline-progress"
      />
      <ol class="timeline" aria-label={`${OPERATION[data.operation]} steps`}>
        {data.steps.map((s) => (
          <li
            key={s.name}
            class={`step-${s.state}`}
            aria-current={s.state === 'current' ? 'step' : undefined}
          >
            <span class="step-name">{s.name}</span> <span class="step-state">{STATE[s.state]}</span>{' '}
            <time dateTime={s.starts_at}>{new Date(s.starts_at).toLocaleTimeString()}</time>
            {' – '}
            <time dateTime={s.ends_at}>{new Date(s.ends_at).toLocaleTimeString()}</time>
          </li>
        ))}
      </ol>
    </>
  );
}
