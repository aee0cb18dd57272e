import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { FjordClient } from '../../../sdk/index.js';
import { must } from '../api.js';
import { TimeChart } from '../ui/chart.js';
import type { Row } from '../ui/table.js';
import { Failure } from '../ui/widgets.js';
import { ServerBackups, ServerSnapshots } from './server-snapshots.js';
import { ServerTerminal } from './server-terminal.js';
import './infra.css';

type Props = { id: string; row: Row; api: FjordClient };

/** Samples kept for the charts: ten minutes at one every two seconds. */
const KEEP = 300;
const EVERY_MS = 2000;

interface Sample {
  t: number;
  cpu: number;
  memory: number;
  disk: number;
  /** Bytes per second since the previous sample (null for the first). */
  rx: number | null;
  tx: number | null;
}

/**
 * The actions the API accepts in each state (the server's `move` rules): start from `stopped`,
 * stop and reboot from `running`; snapshots and rollbacks need it stopped, backups running or
 * stopped, a backup's restore stopped. Buttons follow these, so none is offered that would fail.
 */
export const allowed = (status: string) => ({
  start: status === 'stopped',
  stop: status === 'running',
  reboot: status === 'running',
  snapshot: status === 'stopped',
  backup: status === 'running' || status === 'stopped',
  restore: status === 'stopped',
});
export type Allowed = ReturnType<typeof allowed>;

const STATE_SENTENCE: Record<string, string> = {
  provisioning: 'The server is being provisioned.',
  starting: 'The server is starting.',
  stopping: 'The server is stopping.',
  running: 'The server is running.',
  stopped: 'The server is stopped.',
};

/**
 * A server's page below its facts. Its state is read every two seconds while the page is open
 * (`GET /v1/vps/{id}/status`): the power buttons, the terminal and the snapshot and backup
 * actions follow it, and its metrics are charted from the same reads.
 */
export function ServerSections({ id, row, api }: Props) {
  const queries = useQueryClient();
  const status = useQuery({
    queryKey: ['server-detail', id, 'status'],
    queryFn: () => must(api.GET('/v1/vps/{vps_id}/status', { params: { path: { vps_id: id } } })),
    refetchInterval: EVERY_MS,
  });
  const state = status.data?.status ?? String(row['status']);
  // The facts above come from the server's record: read it again when its state moves on.
  const seen = useRef(state);
  useEffect(() => {
    if (seen.current !== state) {
      seen.current = state;
      void queries.invalidateQueries({ queryKey: ['servers', 'detail', id] });
    }
  }, [state]);
  const samples = useSamples(status.data, status.dataUpdatedAt);
  const can = allowed(state);
  return (
    <>
      <Power id={id} api={api} state={state} can={can} />
      <Metrics state={state} samples={samples} uptime={status.data?.uptime_seconds ?? 0} />
      <ServerSnapshots id={id} api={api} can={can} />
      <ServerBackups id={id} api={api} can={can} />
      <Terminal id={id} running={state === 'running'} />
    </>
  );
}

/** The reads of the status kept as chart samples, network counters turned into rates. */
function useSamples(
  data:
    | {
        status: string;
        cpu_usage_percent: number;
        memory_usage_percent: number;
        disk_usage_percent: number;
        network_in_bytes: number;
        network_out_bytes: number;
      }
    | undefined,
  at: number,
): Sample[] {
  const [samples, setSamples] = useState<Sample[]>([]);
  const last = useRef<{ t: number; rx: number; tx: number } | null>(null);
  useEffect(() => {
    if (!data || !at) return;
    if (data.status !== 'running') {
      last.current = null;
      return;
    }
    const t = at / 1000;
    const prev = last.current;
    const rate = (now: number, before: number | undefined) =>
      prev && before !== undefined && now >= before && t > prev.t ? (now - before) / (t - prev.t) : null;
    const s: Sample = {
      t,
      cpu: data.cpu_usage_percent,
      memory: data.memory_usage_percent,
      disk: data.disk_usage_percent,
      rx: rate(data.network_in_bytes, prev?.rx),
      tx: rate(data.network_out_bytes, prev?.tx),
    };
    last.current = { t, rx: data.network_in_bytes, tx: data.network_out_bytes };
    setSamples((old) => [...old, s].slice(-KEEP));
  }, [at]);
  return samples;
}

function Power({ id, api, state, can }: { id: string; api: FjordClient; state: string; can: Allowed }) {
  const queries = useQueryClient();
  const [problem, setProblem] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const act =
    (path: '/v1/vps/{vps_id}/start' | '/v1/vps/{vps_id}/stop' | '/v1/vps/{vps_id}/reboot') => async () => {
      setProblem(null);
      setBusy(true);
      try {
        await must(api.POST(path, { params: { path: { vps_id: id } } }));
      } catch (err) {
        setProblem(err);
      } finally {
        setBusy(false);
      }
      await queries.invalidateQueries({ queryKey: ['server-detail', id] });
      await queries.invalidateQueries({ queryKey: ['servers'] });
    };
  const moving = ['provisioning', 'starting', 'stopping'].includes(state);
  return (
    <section aria-labelledby="power-heading">
      <h2 id="power-heading">Power</h2>
      <p role="status" class="server-state">
        <span class={`state state-${state}`}>{state}</span>{' '}
        {STATE_SENTENCE[state] ?? `The server is ${state}.`}
      </p>
      {moving && <progress aria-label={`The server is ${state}`} />}
      <div class="actions">
        <button type="button" disabled={busy || !can.start} onClick={act('/v1/vps/{vps_id}/start')}>
          Start
        </button>
        <button type="button" disabled={busy || !can.stop} onClick={act('/v1/vps/{vps_id}/stop')}>
          Stop
        </button>
        <button type="button" disabled={busy || !can.reboot} onClick={act('/v1/vps/{vps_id}/reboot')}>
          Reboot
        </button>
      </div>
      {problem ? <Failure error={problem} /> : null}
    </section>
  );
}

function Metrics({ state, samples, uptime }: { state: string; samples: Sample[]; uptime: number }) {
  const times = samples.map((s) => s.t);
  const latest = samples[samples.length - 1];
  return (
    <section aria-labelledby="metrics-heading">
      <h2 id="metrics-heading">Metrics</h2>
      {state !== 'running' ? (
        <p class="empty">The server is {state}: metrics are read while it runs.</p>
      ) : samples.length === 0 ? (
        <p role="status">Reading the first sample…</p>
      ) : (
        <>
          <p>
            Up {formatUptime(uptime)}. Now: CPU {latest!.cpu.toFixed(1)} %, memory {latest!.memory.toFixed(1)}{' '}
            %, disk {latest!.disk.toFixed(1)} %. Charted every two seconds while this page is open.
          </p>
          <div class="chart-pair">
            <figure>
              <figcaption>CPU, memory and disk (%)</figcaption>
              <TimeChart
                label="CPU, memory and disk use, percent"
                times={times}
                unit=" %"
                series={[
                  { label: 'CPU', values: samples.map((s) => s.cpu) },
                  { label: 'Memory', values: samples.map((s) => s.memory) },
                  { label: 'Disk', values: samples.map((s) => s.disk) },
                ]}
              />
            </figure>
            <figure>
              <figcaption>Network (bytes per second)</figcaption>
              <TimeChart
                label="Network traffic, bytes per second"
                times={times}
                unit=" B/s"
                series={[
                  { label: 'In', values: samples.map((s) => s.rx) },
                  { label: 'Out', values: samples.map((s) => s.tx) },
                ]}
              />
            </figure>
          </div>
        </>
      )}
    </section>
  );
}

function formatUptime(s: number): string {
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** The terminal is opened on demand: it logs in to the server, which a page visit should not do. */
function Terminal({ id, running }: { id: string; running: boolean }) {
  const [shown, setShown] = useState(false);
  return (
    <section aria-labelledby="terminal-heading">
      <h2 id="terminal-heading">Terminal</h2>
      {/* Once opened it stays: a status read between two polls must not cut a working shell (the
          socket says itself when the server stops). */}
      {shown ? (
        <ServerTerminal id={id} />
      ) : (
        <>
          <p>A shell on the server as root, in the browser. The server must be running.</p>
          <button type="button" disabled={!running} onClick={() => setShown(true)}>
            Open terminal
          </button>
        </>
      )}
    </section>
  );
}
