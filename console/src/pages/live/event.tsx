import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { Link, navigate } from '../../router.js';
import { SchemaForm } from '../../ui/schema-form.js';
import { DataTable, type Row, when } from '../../ui/table.js';
import { ConfirmDelete, Facts, Failure, Panel, QueryView, SecretOnce } from '../../ui/widgets.js';
import { Health, Ingest, Sessions, WATCH_MS } from './event-ingest.js';
import { Player } from './player.js';

/** A live event: its state, the player, ingest settings and health, audience, sessions, recordings, tokens. */
export function EventPage({ id }: { id: string }) {
  const api = useApi();
  const queries = useQueryClient();
  const path = { params: { path: { event_id: id } } };
  const event = useQuery({
    queryKey: ['live', 'event', id],
    queryFn: async () => (await must(api.GET('/v1/live-events/events/{event_id}', path))) as Row,
    refetchInterval: WATCH_MS,
  });
  const e = event.data;
  const [problem, setProblem] = useState<unknown>(null);
  const act =
    (what: '/v1/live-events/events/{event_id}/live/start' | '/v1/live-events/events/{event_id}/live/stop') =>
    async () => {
      setProblem(null);
      try {
        await must(api.POST(what, path));
      } catch (err) {
        setProblem(err);
      }
      await queries.invalidateQueries({ queryKey: ['live'] });
    };
  return (
    <section>
      <p class="crumbs">
        <Link href="/live">Live events</Link> / <span>{e ? String(e['name']) : id}</span>
      </p>
      <h1>Live event: {e ? String(e['name']) : id}</h1>
      <QueryView query={event} what="the event">
        {() =>
          e && (
            <>
              <p>
                The event is <strong class={`live-${String(e['status'])}`}>{String(e['status'])}</strong>.
                Watch page: <a href={String(e['watch_url'])}>{String(e['watch_url'])}</a>
              </p>
              <div class="actions">
                <button type="button" onClick={act('/v1/live-events/events/{event_id}/live/start')}>
                  Go live
                </button>
                <button type="button" onClick={act('/v1/live-events/events/{event_id}/live/stop')}>
                  End the event
                </button>
              </div>
              {problem ? <Failure error={problem} /> : null}
              <section aria-labelledby="player-heading">
                <h2 id="player-heading">Player</h2>
                <Player slug={String(e['slug'])} live={e['status'] === 'live'} />
              </section>
              <Ingest id={id} />
              <Health id={id} />
              <Sessions id={id} />
              <Recordings id={id} />
              <Tokens id={id} />
              <section aria-labelledby="edit-heading">
                <h2 id="edit-heading">Settings</h2>
                <Facts
                  data={e}
                  keys={[
                    'visibility_mode',
                    'scheduled_start_at',
                    'record_enabled',
                    'replay_enabled',
                    'embed_enabled',
                    'auto_start_on_ingest',
                    'max_bitrate_kbps',
                  ]}
                />
                <Panel title="Edit the event">
                  <SchemaForm
                    operationId="updateLiveEvent"
                    fields={[
                      'name',
                      'description',
                      'scheduled_start_at',
                      'visibility_mode',
                      'record_enabled',
                      'replay_enabled',
                      'embed_enabled',
                      'auto_start_on_ingest',
                    ]}
                    labels={{ visibility_mode: 'Who may watch', scheduled_start_at: 'Starts at (ISO time)' }}
                    initial={Object.fromEntries(
                      [
                        'name',
                        'description',
                        'scheduled_start_at',
                        'visibility_mode',
                        'record_enabled',
                        'replay_enabled',
                        'embed_enabled',
                        'auto_start_on_ingest',
                      ]
                        .filter((k) => e[k] !== null && e[k] !== undefined)
                        .map((k) => [k, e[k]]),
                    )}
                    idPrefix="edit-event"
                    submitLabel="Save event"
                    onSubmit={async (body) => {
                      await must(
                        api.PATCH('/v1/live-events/events/{event_id}', { ...path, body: body as never }),
                      );
                      await queries.invalidateQueries({ queryKey: ['live'] });
                    }}
                  />
                </Panel>
              </section>
              <section class="danger-zone" aria-labelledby="danger-heading">
                <h2 id="danger-heading">Delete</h2>
                <ConfirmDelete
                  name={String(e['name'])}
                  what="event"
                  onConfirm={async () => {
                    await must(api.DELETE('/v1/live-events/events/{event_id}', path));
                    await queries.invalidateQueries({ queryKey: ['live'] });
                    navigate('/live');
                  }}
                />
              </section>
            </>
          )
        }
      </QueryView>
    </section>
  );
}

/** Recordings (MP4 downloaded through the API with the session) and the replay. */
function Recordings({ id }: { id: string }) {
  const api = useApi();
  const recordings = useQuery({
    queryKey: ['live', 'recordings', id],
    queryFn: async () =>
      (
        await must(
          api.GET('/v1/live-events/events/{event_id}/recordings', { params: { path: { event_id: id } } }),
        )
      ).recordings as unknown as Row[],
    refetchInterval: WATCH_MS * 2,
  });
  return (
    <section aria-labelledby="recordings-heading">
      <h2 id="recordings-heading">Recordings</h2>
      <DataTable
        name="recordings"
        label="Recordings"
        rows={recordings.data ?? []}
        columns={[
          { key: 'started_at', label: 'Started', render: (r) => when(r['started_at']) },
          { key: 'status', label: 'Status' },
          { key: 'format', label: 'Format' },
          { key: 'duration_seconds', label: 'Seconds' },
          { key: 'size_bytes', label: 'Bytes' },
        ]}
        actions={(r) =>
          r['format'] === 'mp4' && r['status'] === 'ready' ? (
            <button
              type="button"
              onClick={async () => {
                const { data } = await api.GET(
                  '/v1/live-events/events/{event_id}/recordings/{recording_id}/download',
                  {
                    params: { path: { event_id: id, recording_id: String(r['id']) } },
                    parseAs: 'blob',
                  },
                );
                const url = URL.createObjectURL(data as unknown as Blob);
                const a = document.createElement('a');
                a.href = url;
                a.download = `${String(r['id'])}.mp4`;
                a.click();
                setTimeout(() => URL.revokeObjectURL(url), 5000);
              }}
            >
              Download
            </button>
          ) : null
        }
        empty={
          <p>
            No recordings. With recording on, each ingest session is kept; the replay plays in the player once
            the event ends.
          </p>
        }
      />
    </section>
  );
}

/** Watch tokens of a `token` event: created with the token shown once. */
function Tokens({ id }: { id: string }) {
  const api = useApi();
  const queries = useQueryClient();
  const path = { params: { path: { event_id: id } } };
  const tokens = useQuery({
    queryKey: ['live', 'tokens', id],
    queryFn: async () =>
      (await must(api.GET('/v1/live-events/events/{event_id}/tokens', path))).tokens as unknown as Row[],
  });
  const [token, setToken] = useState<string | null>(null);
  return (
    <section aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">Watch tokens</h2>
      <Panel title="Create a watch token">
        <SchemaForm
          operationId="createLiveEventWatchToken"
          idPrefix="watch-token"
          submitLabel="Create token"
          onSubmit={async (body) => {
            const t = (await must(
              api.POST('/v1/live-events/events/{event_id}/tokens', { ...path, body: body as never }),
            )) as Row;
            setToken(String(t['token'] ?? ''));
            await queries.invalidateQueries({ queryKey: ['live', 'tokens', id] });
          }}
        />
      </Panel>
      {token && <SecretOnce label="Watch token" value={token} onDone={() => setToken(null)} />}
      <DataTable
        name="tokens"
        label="Watch tokens"
        rows={tokens.data ?? []}
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'token_prefix', label: 'Token' },
          { key: 'status', label: 'Status' },
          { key: 'use_count', label: 'Uses' },
          { key: 'max_uses', label: 'Max uses' },
          { key: 'expires_at', label: 'Expires', render: (r) => when(r['expires_at']) },
        ]}
        empty={
          <p>
            No watch tokens. A token event admits viewers who bring one (in the watch link or the access-code
            form).
          </p>
        }
      />
    </section>
  );
}
