import { useState } from 'preact/hooks';
import { must } from '../../api.js';
import type { Row } from '../../ui/table.js';
import { Collection, DeleteButton } from './collection.js';

const rows = (v: unknown) => (Array.isArray(v) ? (v as Row[]) : []);
const joined = (k: string) => (r: Row) => (Array.isArray(r[k]) ? (r[k] as unknown[]).join(', ') : 'all');

/** Notification channels (with "Send test") and the policies that route alarms to them. */
export function NotificationsPage() {
  const [tested, setTested] = useState('');
  return (
    <section>
      <h1>Notifications</h1>
      <p class="intro">
        Channels say where alarm notifications go; policies say which alarms go to which channels.
      </p>
      <h2>Channels</h2>
      <p role="status" class="notice">
        {tested}
      </p>
      <Collection
        name="channels"
        noun="channel"
        load={async (api) => rows((await must(api.GET('/v1/iot/notifications/channels'))).channels)}
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'id', label: 'Id' },
          { key: 'channel_type', label: 'Type' },
          { key: 'config', label: 'Settings' },
          { key: 'enabled', label: 'Enabled' },
        ]}
        create={{
          operationId: 'iotCreateChannel',
          labels: { channel_type: 'Type', config: 'Settings (JSON, e.g. {"url": "https://…"})' },
          submit: (api, body) => must(api.POST('/v1/iot/notifications/channels', { body: body as never })),
        }}
        actions={(r, api, done) => (
          <>
            <button
              type="button"
              aria-label={`Send a test to ${String(r['name'])}`}
              onClick={async () => {
                setTested(`Sending a test to ${String(r['name'])}…`);
                const { data, response } = await api.POST(
                  '/v1/iot/notifications/channels/{channel_id}/test',
                  {
                    params: { path: { channel_id: String(r['id']) } },
                  },
                );
                const d = (data ?? {}) as Row;
                setTested(
                  response.ok
                    ? `Test to ${String(r['name'])}: ${String(d['status'] ?? 'sent')}${d['error'] ? ` (${String(d['error'])})` : ''}`
                    : `The test to ${String(r['name'])} failed (${response.status}).`,
                );
              }}
            >
              Send test
            </button>{' '}
            <DeleteButton
              what="channel"
              name={String(r['name'])}
              onDelete={async () => {
                await must(
                  api.DELETE('/v1/iot/notifications/channels/{channel_id}', {
                    params: { path: { channel_id: String(r['id']) } },
                  }),
                );
                await done(`The channel ${String(r['name'])} was deleted.`);
              }}
            />
          </>
        )}
        empty="No channels yet. Add a webhook, e-mail or SMS channel, then a policy that uses it."
      />
      <h2>Policies</h2>
      <Collection
        name="policies"
        noun="policy"
        load={async (api) => rows((await must(api.GET('/v1/iot/notifications/policies'))).policies)}
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'channel_ids', label: 'Channels', render: joined('channel_ids') },
          { key: 'severities', label: 'Severities', render: joined('severities') },
          { key: 'events', label: 'Events', render: joined('events') },
          { key: 'renotify_minutes', label: 'Renotify (min)' },
        ]}
        create={{
          operationId: 'iotCreatePolicy',
          fields: ['name', 'channel_ids', 'severities', 'events', 'renotify_minutes', 'enabled'],
          labels: { channel_ids: 'Channel ids' },
          submit: (api, body) => must(api.POST('/v1/iot/notifications/policies', { body: body as never })),
        }}
        actions={(r, api, done) => (
          <DeleteButton
            what="policy"
            name={String(r['name'])}
            onDelete={async () => {
              await must(
                api.DELETE('/v1/iot/notifications/policies/{policy_id}', {
                  params: { path: { policy_id: String(r['id']) } },
                }),
              );
              await done(`The policy ${String(r['name'])} was deleted.`);
            }}
          />
        )}
        empty="No policies yet: alarms raise no notifications until a policy routes them to a channel."
      />
    </section>
  );
}
