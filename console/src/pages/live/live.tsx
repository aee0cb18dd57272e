import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { match } from '../../router.js';
import { SchemaForm } from '../../ui/schema-form.js';
import { DataTable, type Row, when } from '../../ui/table.js';
import { Panel, QueryView, SecretOnce } from '../../ui/widgets.js';
import { EventPage } from './event.js';

/** The live events area: the list with its create form, and each event's page. */
export function LivePages({ path }: { path: string }) {
  const one = match('/live/:id', path);
  return one ? <EventPage key={one['id']} id={one['id']!} /> : <EventsPage />;
}

function EventsPage() {
  const api = useApi();
  const queries = useQueryClient();
  const events = useQuery({
    queryKey: ['live', 'list'],
    queryFn: async () =>
      (await must(api.GET('/v1/live-events/events', { params: { query: { per_page: 100 } } })))
        .events as Row[],
  });
  const [key, setKey] = useState<string | null>(null);
  return (
    <section>
      <h1>Live events</h1>
      <p class="intro">
        Streams your encoder pushes over RTMP, watched as HLS on Fjord’s watch page or here.
      </p>
      <Panel title="Create an event" open={events.data?.length === 0}>
        <SchemaForm
          operationId="createLiveEvent"
          fields={[
            'name',
            'description',
            'scheduled_start_at',
            'visibility_mode',
            'password',
            'auto_start_on_ingest',
            'record_enabled',
            'replay_enabled',
            'embed_enabled',
          ]}
          labels={{ visibility_mode: 'Who may watch', scheduled_start_at: 'Starts at (ISO time)' }}
          submitLabel="Create event"
          onSubmit={async (body) => {
            const e = (await must(api.POST('/v1/live-events/events', { body: body as never }))) as Row;
            setKey(String(e['stream_key'] ?? ''));
            await queries.invalidateQueries({ queryKey: ['live'] });
          }}
        />
      </Panel>
      {key && <SecretOnce label="Stream key" value={key} onDone={() => setKey(null)} />}
      <QueryView query={events} what="events">
        {(data) => (
          <DataTable
            label="Events"
            rows={data ?? []}
            href={(r) => `/live/${encodeURIComponent(String(r['id']))}`}
            columns={[
              { key: 'name', label: 'Name' },
              { key: 'status', label: 'Status' },
              { key: 'visibility_mode', label: 'Who may watch' },
              { key: 'scheduled_start_at', label: 'Starts', render: (r) => when(r['scheduled_start_at']) },
            ]}
            empty={<p>No live events yet. Create one above; its stream key goes into OBS or ffmpeg.</p>}
          />
        )}
      </QueryView>
    </section>
  );
}
