import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { FjordClient } from '../../../sdk/index.js';
import { type ApiProblem, must } from '../api.js';
import { BarChart } from '../ui/bar-chart.js';
import type { Row } from '../ui/table.js';
import { Failure, QueryView } from '../ui/widgets.js';
import { RecordEditor } from './dns-records.js';
import { saveFile } from './save-file.js';

type Props = { id: string; row: Row; api: FjordClient };

/** A zone's page below its facts: records, DNSSEC, the zone file, query statistics. */
export function DnsSections({ id, row, api }: Props) {
  return (
    <>
      <RecordEditor zone={id} />
      <Dnssec zone={id} enabled={row['dnssec_enabled'] === true} api={api} />
      <ZoneFile zone={id} api={api} />
      <QueryStatistics zone={id} api={api} />
    </>
  );
}

/**
 * DNSSEC on and off. The DS record is what the registrar needs; activation answers it, and
 * activating again returns the same one, so a zone already signed can show it at any time.
 * Turning off asks first: with the DS still at the registrar, resolvers would fail the zone.
 */
function Dnssec({ zone, enabled, api }: { zone: string; enabled: boolean; api: FjordClient }) {
  const queries = useQueryClient();
  const [ds, setDs] = useState<{ records: string[]; algorithm: string } | null>(null);
  const [asking, setAsking] = useState(false);
  const [problem, setProblem] = useState<unknown>(null);
  const path = { params: { path: { zone_name: zone } } };
  const run = (work: () => Promise<unknown>) => async () => {
    setProblem(null);
    try {
      await work();
      await queries.invalidateQueries({ queryKey: ['dns'] });
    } catch (err) {
      setProblem(err);
    }
  };
  const activate = run(async () => {
    const r = await must(api.POST('/v1/dns/zones/{zone_name}/dnssec/activate', path));
    setDs({ records: r.ds_records, algorithm: r.algorithm });
  });
  return (
    <section aria-labelledby="dnssec-heading">
      <h2 id="dnssec-heading">DNSSEC</h2>
      <p>{enabled ? 'DNSSEC is on: answers are signed.' : 'DNSSEC is off: answers are not signed.'}</p>
      <div class="actions">
        {!enabled && (
          <button type="button" onClick={activate}>
            Turn DNSSEC on
          </button>
        )}
        {enabled && !ds && (
          <button type="button" onClick={activate}>
            Show the DS record
          </button>
        )}
        {enabled && !asking && (
          <button type="button" class="danger" onClick={() => setAsking(true)}>
            Turn DNSSEC off
          </button>
        )}
      </div>
      {enabled && asking && (
        <div class="confirm">
          <p>
            Remove the DS record at your registrar first and wait for its TTL: while it is there, validating
            resolvers refuse an unsigned zone.
          </p>
          <div class="actions">
            <button
              type="button"
              class="danger"
              onClick={run(async () => {
                await must(api.DELETE('/v1/dns/zones/{zone_name}/dnssec', path));
                setDs(null);
                setAsking(false);
              })}
            >
              Turn DNSSEC off now
            </button>
            <button type="button" onClick={() => setAsking(false)}>
              Keep DNSSEC on
            </button>
          </div>
        </div>
      )}
      {enabled && ds && (
        <>
          <p>
            Give your registrar this DS record (algorithm {ds.algorithm}); it links the parent zone to this
            zone’s signing key.
          </p>
          <pre class="code ds-record">{ds.records.join('\n')}</pre>
        </>
      )}
      {problem ? <Failure error={problem} /> : null}
    </section>
  );
}

/** Export to a file; import from a file or pasted text, adding to the records or replacing them. */
function ZoneFile({ zone, api }: { zone: string; api: FjordClient }) {
  const queries = useQueryClient();
  const [text, setText] = useState('');
  const [replace, setReplace] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [result, setResult] = useState<{
    imported: number;
    deleted: number;
    skipped: { line: number; type: string; reason: string }[];
  } | null>(null);
  const path = { params: { path: { zone_name: zone } } };
  return (
    <section aria-labelledby="zonefile-heading">
      <h2 id="zonefile-heading">Zone file</h2>
      <button
        type="button"
        onClick={async () => {
          const { data } = await api.GET('/v1/dns/zones/{zone_name}/export', { ...path, parseAs: 'text' });
          saveFile(`${zone}.zone`, String(data ?? ''));
        }}
      >
        Export zone file
      </button>
      <form
        class="zone-import"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setProblem(null);
          setResult(null);
          try {
            setResult(
              await must(
                api.POST('/v1/dns/zones/{zone_name}/import', { ...path, body: { zone_file: text, replace } }),
              ),
            );
            await queries.invalidateQueries({ queryKey: ['dns'] });
          } catch (err) {
            setProblem(err as ApiProblem);
          } finally {
            setBusy(false);
          }
        }}
      >
        <label for="zone-import-file">Import from a file</label>
        <input
          id="zone-import-file"
          type="file"
          accept=".zone,.txt,text/plain,text/dns"
          onChange={async (e) => {
            const file = e.currentTarget.files?.[0];
            if (file) setText(await file.text());
          }}
        />
        <label for="zone-import-text">Zone file (BIND format)</label>
        <textarea
          id="zone-import-text"
          rows={6}
          value={text}
          placeholder={`www 300 IN A 192.0.2.10\n@ 3600 IN MX 10 mail.${zone}.`}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <label class="check">
          <input type="checkbox" checked={replace} onChange={(e) => setReplace(e.currentTarget.checked)} />
          Replace the zone’s records (otherwise the file’s records are added)
        </label>
        <button type="submit" disabled={busy || !text.trim()}>
          Import zone file
        </button>
        {problem && (
          <p class="error" role="alert">
            {problem.message}
          </p>
        )}
      </form>
      <p role="status" class="notice">
        {result
          ? `${result.imported} records imported, ${result.deleted} replaced records deleted, ${result.skipped.length} lines skipped.`
          : ''}
      </p>
      {result && result.skipped.length > 0 && (
        <ul class="skipped" aria-label="Lines skipped">
          {result.skipped.map((s) => (
            <li key={s.line}>
              Line {s.line} ({s.type}): {s.reason}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/**
 * This month's queries by record type, as bars, with the account's monthly query allowance
 * (`/v1/dns/usage`) beside the zone's own count. Counts arrive from the DNS servers in batches,
 * so the page looks again every half minute while it is open.
 */
function QueryStatistics({ zone, api }: { zone: string; api: FjordClient }) {
  const stats = useQuery({
    queryKey: ['dns', 'statistics', zone],
    queryFn: () =>
      must(api.GET('/v1/dns/zones/{zone_name}/statistics', { params: { path: { zone_name: zone } } })),
    refetchInterval: 30_000,
  });
  const usage = useQuery({
    queryKey: ['dns', 'usage'],
    queryFn: () => must(api.GET('/v1/dns/usage')),
    refetchInterval: 30_000,
  });
  return (
    <section aria-labelledby="statistics-heading">
      <h2 id="statistics-heading">Queries</h2>
      <QueryView query={stats} what="statistics">
        {(s) => (
          <>
            <p>
              {s.queries_today.toLocaleString()} queries today, {s.queries_this_month.toLocaleString()} this
              month, answered in {s.response_time_ms_avg} ms on average.
              {usage.data?.queries.limit
                ? ` The account’s zones have used ${usage.data.queries.used.toLocaleString()} of ${usage.data.queries.limit.toLocaleString()} queries this month.`
                : ''}
            </p>
            {Object.keys(s.top_record_types).length === 0 ? (
              <p class="empty">No queries counted this month yet.</p>
            ) : (
              <BarChart
                label="Queries this month by record type"
                bars={Object.entries(s.top_record_types as Record<string, number>).map(([label, value]) => ({
                  label,
                  value,
                }))}
              />
            )}
          </>
        )}
      </QueryView>
    </section>
  );
}
