import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { DataTable, type Row } from '../../ui/table.js';
import { Failure, Panel, pending, QueryView } from '../../ui/widgets.js';
import { Field, fmt, State } from './shared.js';

type JobType = 'image' | 'video' | 'text-to-speech';
const ASPECTS = ['1:1', '4:5', '16:9', '9:16'];
const CURRENCIES = ['NOK', 'SEK', 'DKK', 'EUR', 'USD'];

/** The units a job is priced by, as the API counts them: one image, seconds of video, characters. */
const unitsOf = (type: JobType, prompt: string, duration: number) =>
  type === 'image' ? 1 : type === 'video' ? duration : prompt.length;

export function GpuPage() {
  const api = useApi();
  const jobs = useQuery({
    queryKey: ['gpu', 'jobs'],
    queryFn: async () => (await must(api.GET('/v1/gpu/jobs', {}))) as unknown as Row[],
    // The queue is kept current while anything in it is still on its way.
    refetchInterval: (q) =>
      (q.state.data ?? []).some((j) => j['status'] === 'queued' || j['status'] === 'processing')
        ? 1500
        : false,
  });
  const all = jobs.data ?? [];
  const done = all.filter((j) => j['status'] === 'completed');
  return (
    <section>
      <h1>GPU jobs</h1>
      <p class="intro">
        Images, videos and speech made by GPU workers. Each job shows what it will cost before it is sent.
      </p>
      <Create />
      <Engines />
      <h2>Queue</h2>
      <QueryView query={jobs} what="jobs">
        {() => (
          <DataTable
            name="jobs"
            label="GPU jobs"
            rows={all.filter((j) => j['status'] !== 'completed')}
            columns={[
              { key: 'id', label: 'Job' },
              { key: 'type', label: 'Type' },
              { key: 'engine', label: 'Engine' },
              { key: 'status', label: 'Status', render: (r) => <State value={String(r['status'])} /> },
              { key: 'progress', label: 'Progress', render: (r) => `${r['progress']} %` },
              {
                key: 'waiting_reason',
                label: 'Why it waits',
                render: (r) => String(r['waiting_reason'] ?? r['error_message'] ?? '—'),
              },
            ]}
            actions={(r) =>
              r['status'] === 'queued' || r['status'] === 'processing' ? (
                <Cancel id={String(r['id'])} />
              ) : null
            }
            empty="Nothing queued."
          />
        )}
      </QueryView>
      <h2>Gallery</h2>
      {done.length === 0 ? (
        <p class="empty">Finished images and videos appear here.</p>
      ) : (
        <ul class="gallery" aria-label="Finished jobs">
          {done.map((j) => (
            <li key={String(j['id'])}>
              <Output job={j} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Output({ job }: { job: Row }) {
  const files = (job['output_files'] ?? {}) as Record<string, string>;
  const prompt = String((job['inputs'] as Row | undefined)?.['prompt'] ?? job['type']);
  const cost = job['actual_cost'] as { amount: number; currency: string } | null;
  return (
    <figure>
      {Object.entries(files).map(([name, url]) =>
        /\.(png|jpe?g|webp)$/i.test(name) || name === 'image' ? (
          <img key={name} src={url} alt={`${job['engine']} output ${name}`} loading="lazy" />
        ) : /\.(mp4|webm)$/i.test(name) || name === 'video' ? (
          // biome-ignore lint/a11y/useMediaCaption: a generated clip has no speech
          <video key={name} src={url} controls aria-label={`${job['engine']} output ${name}`} />
        ) : (
          <a key={name} href={url} download>
            Download {name}
          </a>
        ),
      )}
      <figcaption>
        {String(job['engine'])} ·{' '}
        {new Date(String(job['completed_at'] ?? job['created_at'])).toLocaleString()}
        {cost && ` · ${fmt(cost.amount)} ${cost.currency}`}
        <span class="visually-hidden"> · {prompt}</span>
      </figcaption>
    </figure>
  );
}

function Cancel({ id }: { id: string }) {
  const api = useApi();
  const queries = useQueryClient();
  return (
    <button
      type="button"
      onClick={async () => {
        await must(api.DELETE('/v1/gpu/jobs/{job_id}', { params: { path: { job_id: id } } }));
        await queries.invalidateQueries({ queryKey: ['gpu'] });
      }}
    >
      Cancel {id}
    </button>
  );
}

/** Engines, and whether a worker serves each: a job for an engine no worker serves waits. */
function Engines() {
  const api = useApi();
  const engines = useQuery({
    queryKey: ['gpu', 'engines'],
    queryFn: () => must(api.GET('/v1/gpu/engines')),
    refetchInterval: 10_000,
  });
  return (
    <>
      <h2>Workers</h2>
      <QueryView query={engines} what="engines">
        {(data) => (
          <DataTable
            name="engines"
            label="Engines and their workers"
            rows={(data ?? []) as unknown as Row[]}
            columns={[
              { key: 'name', label: 'Engine' },
              { key: 'type', label: 'Type' },
              {
                key: 'available',
                label: 'Workers',
                render: (r) => <State value={r['available'] ? 'online' : 'no worker'} />,
              },
              { key: 'tier_required', label: 'Tier' },
            ]}
            empty="No engines in this install's catalogue."
          />
        )}
      </QueryView>
    </>
  );
}

function Create() {
  const api = useApi();
  const queries = useQueryClient();
  const meta = useQuery({
    queryKey: ['gpu', 'catalogue'],
    queryFn: async () => ({
      engines: await must(api.GET('/v1/gpu/engines')),
      presets: await must(api.GET('/v1/gpu/presets')),
      prices: await must(api.GET('/v1/gpu/pricing')),
    }),
    staleTime: 60_000,
  });
  const [type, setType] = useState<JobType>('image');
  const [preset, setPreset] = useState('');
  const [engine, setEngine] = useState('');
  const [prompt, setPrompt] = useState('');
  const [aspect, setAspect] = useState('1:1');
  const [duration, setDuration] = useState(4);
  const [currency, setCurrency] = useState('NOK');
  const [error, setError] = useState<unknown>(null);
  const [sent, setSent] = useState('');
  const wait = pending(meta, 'engines and presets');
  if (wait || !meta.data) return wait;
  const engines = meta.data.engines.filter((e) => e.type === type);
  const chosen = engine && engines.some((e) => e.engine === engine) ? engine : (engines[0]?.engine ?? '');
  const presets = meta.data.presets.filter((p) => p.type === type);
  const price = meta.data.prices.find((p) => p.engine === chosen && p.currency === currency);
  const units = unitsOf(type, prompt, duration);
  return (
    <Panel title="Create a job" open>
      <form
        class="form"
        onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          try {
            const inputs =
              type === 'image'
                ? { prompt, aspect_ratio: aspect }
                : type === 'video'
                  ? { prompt, duration_sec: duration }
                  : { text: prompt };
            const job = await must(
              api.POST('/v1/gpu/jobs', {
                body: { type, engine: chosen, inputs, ...(preset ? { preset } : {}) },
              }),
            );
            // The API's reason is a sentence with its own full stop: end ours only when it has none.
            const said = `Job ${job.id} is ${job.status}${job.waiting_reason ? `: ${job.waiting_reason}` : ''}`;
            setSent(/[.!?]$/.test(said) ? said : `${said}.`);
            await queries.invalidateQueries({ queryKey: ['gpu', 'jobs'] });
          } catch (err) {
            setError(err);
          }
        }}
      >
        <Field id="gpu-type" label="Type">
          <select id="gpu-type" value={type} onChange={(e) => setType(e.currentTarget.value as JobType)}>
            <option value="image">Image</option>
            <option value="video">Video</option>
            <option value="text-to-speech">Speech</option>
          </select>
        </Field>
        <Field id="gpu-preset" label="Preset">
          <select id="gpu-preset" value={preset} onChange={(e) => setPreset(e.currentTarget.value)}>
            <option value="">None</option>
            {presets.map((p) => (
              <option key={p.name} value={p.name}>
                {p.name} — {p.description}
              </option>
            ))}
          </select>
        </Field>
        <Field id="gpu-engine" label="Engine">
          <select id="gpu-engine" value={chosen} onChange={(e) => setEngine(e.currentTarget.value)}>
            {engines.map((e) => (
              <option key={e.engine} value={e.engine}>
                {e.name}
                {e.available ? '' : ' (no worker now)'}
              </option>
            ))}
          </select>
        </Field>
        <Field id="gpu-prompt" label={type === 'text-to-speech' ? 'Text' : 'Prompt'}>
          <textarea
            id="gpu-prompt"
            required
            rows={3}
            value={prompt}
            onInput={(e) => setPrompt(e.currentTarget.value)}
          />
        </Field>
        {type === 'image' && (
          <Field id="gpu-aspect" label="Aspect ratio">
            <select id="gpu-aspect" value={aspect} onChange={(e) => setAspect(e.currentTarget.value)}>
              {ASPECTS.map((a) => (
                <option key={a}>{a}</option>
              ))}
            </select>
          </Field>
        )}
        {type === 'video' && (
          <Field id="gpu-duration" label="Duration (seconds)">
            <input
              id="gpu-duration"
              type="number"
              min="1"
              max="30"
              value={duration}
              onInput={(e) => setDuration(Number(e.currentTarget.value))}
            />
          </Field>
        )}
        <Field id="gpu-currency" label="Currency">
          <select id="gpu-currency" value={currency} onChange={(e) => setCurrency(e.currentTarget.value)}>
            {CURRENCIES.map((c) => (
              <option key={c}>{c}</option>
            ))}
          </select>
        </Field>
        <p aria-live="polite" data-testid="gpu-estimate">
          Estimated cost:{' '}
          {price
            ? `${fmt(units * price.price_per_unit)} ${currency} (${fmt(units)} ${price.unit}${units === 1 ? '' : 's'} × ${fmt(price.price_per_unit)})`
            : 'no price for this engine'}
        </p>
        <div class="actions">
          <button type="submit" disabled={!chosen}>
            Submit job
          </button>
        </div>
        <p role="status">{sent}</p>
        {error ? <Failure error={error} /> : null}
      </form>
    </Panel>
  );
}
