import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { DataTable, type Row } from '../../ui/table.js';
import { Facts, Failure, Panel, pending } from '../../ui/widgets.js';
import { Field, State } from './shared.js';

type Summary = {
  ip: string;
  hostname: string | null;
  geo: Record<string, unknown> & { latitude: number | null; longitude: number | null };
  network: Record<string, unknown>;
  threat: { score: number; level: string; is_clean: boolean };
  flags: Record<string, boolean>;
};

export function IpPage() {
  return (
    <section>
      <h1>IP intelligence</h1>
      <p class="intro">
        Look up an address: its threat level, network and location. Report abuse you saw from one.
      </p>
      <Quota />
      <Lookup />
      <Report />
      <Categories />
    </section>
  );
}

/** Today's use against the subscription's daily quota. */
function Quota() {
  const api = useApi();
  const sub = useQuery({
    queryKey: ['ip', 'subscription'],
    queryFn: () => must(api.GET('/v1/ip/subscription')),
  });
  const wait = pending(sub, 'the subscription');
  if (wait || !sub.data) return wait;
  const s = sub.data;
  return (
    <p>
      <label for="ip-quota">
        Today: {s.requests_today} of {s.requests_per_day ?? 'unlimited'} lookups ({s.tier ?? 'no'} tier)
      </label>{' '}
      {s.requests_per_day != null && (
        <meter
          id="ip-quota"
          min={0}
          max={s.requests_per_day}
          value={s.requests_today}
          high={s.requests_per_day * 0.8}
        />
      )}{' '}
      <span class="meter">resets {new Date(s.resets_at).toLocaleString()}</span>
    </p>
  );
}

function Lookup() {
  const api = useApi();
  const queries = useQueryClient();
  const [ip, setIp] = useState('');
  const [result, setResult] = useState<Summary | null>(null);
  const [error, setError] = useState<unknown>(null);
  return (
    <>
      <h2>Lookup</h2>
      <form
        class="form"
        onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          try {
            setResult(
              (await must(api.GET('/v1/ip/{ip}', { params: { path: { ip: ip.trim() } } }))) as Summary,
            );
          } catch (err) {
            setResult(null);
            setError(err);
          }
          await queries.invalidateQueries({ queryKey: ['ip', 'subscription'] });
        }}
      >
        <Field id="ip-address" label="IP address">
          <input id="ip-address" required value={ip} onInput={(e) => setIp(e.currentTarget.value)} />
        </Field>
        <div class="actions">
          <button type="submit">Look up</button>
        </div>
        {error ? <Failure error={error} /> : null}
      </form>
      {result && (
        <div class="two" aria-live="polite">
          <div>
            <h3>
              {result.ip} {result.hostname && `(${result.hostname})`}
            </h3>
            <p>
              Threat: <State value={result.threat.level} /> score {result.threat.score} of 100
              {result.threat.is_clean && ' · no reports'}
            </p>
            <p>
              Flags:{' '}
              {Object.entries(result.flags)
                .filter(([, v]) => v)
                .map(([k]) => k)
                .join(', ') || 'none'}
            </p>
            <h3>Network</h3>
            <Facts data={result.network} />
            <h3>Location</h3>
            <Facts data={result.geo} />
          </div>
          <div>
            <WorldMap
              lat={result.geo.latitude}
              lon={result.geo.longitude}
              label={String(result.geo['country_name'] ?? '')}
            />
          </div>
        </div>
      )}
    </>
  );
}

/**
 * Where the address is, on a graticule drawn here (equirectangular: x is longitude, y latitude);
 * no map tiles or data are fetched from anywhere.
 */
function WorldMap({ lat, lon, label }: { lat: number | null; lon: number | null; label: string }) {
  if (lat === null || lon === null) return <p class="help">No location is known for this address.</p>;
  const x = lon + 180;
  const y = 90 - lat;
  const lines = [];
  for (let l = -150; l <= 150; l += 30)
    lines.push(<line key={`m${l}`} x1={l + 180} x2={l + 180} y1={0} y2={180} />);
  for (let l = -60; l <= 60; l += 30)
    lines.push(<line key={`p${l}`} x1={0} x2={360} y1={90 - l} y2={90 - l} />);
  return (
    <figure class="map">
      <svg viewBox="0 0 360 180" role="img" aria-label={`Location: ${label} at ${lat}, ${lon}`}>
        <g class="grid" stroke="currentColor" stroke-opacity="0.2" stroke-width="0.4">
          {lines}
        </g>
        <circle class="pin" cx={x} cy={y} r="3" />
      </svg>
      <figcaption>
        {label || 'Location'}: {lat.toFixed(2)}, {lon.toFixed(2)}
      </figcaption>
    </figure>
  );
}

function Report() {
  const api = useApi();
  const cats = useQuery({
    queryKey: ['ip', 'categories'],
    queryFn: () => must(api.GET('/v1/ip/categories')),
  });
  const [ip, setIp] = useState('');
  const [cat, setCat] = useState('');
  const [comment, setComment] = useState('');
  const [done, setDone] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <Panel title="Report an address">
      <form
        class="form"
        onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          try {
            await must(
              api.POST('/v1/ip/report', {
                body: {
                  ip,
                  categories: [Number(cat || cats.data?.[0]?.id)],
                  ...(comment ? { comment } : {}),
                },
              }),
            );
            setDone(`Reported ${ip}.`);
          } catch (err) {
            setError(err);
          }
        }}
      >
        <Field id="report-ip" label="Address to report">
          <input id="report-ip" required value={ip} onInput={(e) => setIp(e.currentTarget.value)} />
        </Field>
        <Field id="report-category" label="What it did">
          <select id="report-category" value={cat} onChange={(e) => setCat(e.currentTarget.value)}>
            {(cats.data ?? []).map((c) => (
              <option key={c.id} value={String(c.id)}>
                {c.name}
              </option>
            ))}
          </select>
        </Field>
        <Field id="report-comment" label="Comment (optional)">
          <textarea
            id="report-comment"
            rows={2}
            value={comment}
            onInput={(e) => setComment(e.currentTarget.value)}
          />
        </Field>
        <div class="actions">
          <button type="submit">Report</button>
        </div>
        <p role="status">{done}</p>
        {error ? <Failure error={error} /> : null}
      </form>
    </Panel>
  );
}

function Categories() {
  const api = useApi();
  const cats = useQuery({
    queryKey: ['ip', 'categories'],
    queryFn: () => must(api.GET('/v1/ip/categories')),
  });
  return (
    <>
      <h2>Threat categories</h2>
      <DataTable
        name="categories"
        label="Threat categories"
        rows={(cats.data ?? []) as unknown as Row[]}
        columns={[
          { key: 'id', label: 'Id' },
          { key: 'name', label: 'Name' },
          { key: 'weight', label: 'Weight' },
        ]}
        empty="No categories."
      />
    </>
  );
}
