import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { SchemaForm } from '../../ui/schema-form.js';
import { DataTable, type Row, when } from '../../ui/table.js';
import { Panel, QueryView, SecretOnce } from '../../ui/widgets.js';

/** An online dot with its word: the state is never told by colour alone. */
export function OnlineState({ online }: { online: boolean }) {
  return <span class={online ? 'state-on' : 'state-off'}>{online ? 'Online' : 'Offline'}</span>;
}

/** The devices with their online state and health score, and the form that registers one. */
export function DevicesPage() {
  const api = useApi();
  const queries = useQueryClient();
  const devices = useQuery({
    queryKey: ['iot', 'devices'],
    queryFn: async () => {
      const list = (await must(api.GET('/v1/iot/devices', { params: { query: { page_size: 100 } } })))
        .devices as Row[];
      // Each device's health score (its own endpoint), fetched together for the page's list.
      const health = await Promise.all(
        list.map((d) =>
          must(
            api.GET('/v1/iot/devices/{device_id}/health', {
              params: { path: { device_id: String(d['device_id']) } },
            }),
          ).catch(() => null),
        ),
      );
      return list.map((d, i) => ({
        ...d,
        health_score: health[i]?.health_score ?? null,
        health_status: health[i]?.health_status ?? null,
      }));
    },
  });
  const [secret, setSecret] = useState<Row | null>(null);
  return (
    <section>
      <h1>IoT</h1>
      <p class="intro">Devices that send telemetry over MQTT, their alarms and notifications.</p>
      <Panel title="Register a device" open={devices.data?.length === 0}>
        <SchemaForm
          operationId="iotCreateDevice"
          fields={['name', 'device_id', 'device_type', 'description']}
          labels={{ device_id: 'Device id', device_type: 'Type' }}
          submitLabel="Register device"
          onSubmit={async (body) => {
            const d = await must(api.POST('/v1/iot/devices', { body: body as never }));
            setSecret(d.mqtt_credentials as unknown as Row);
            await queries.invalidateQueries({ queryKey: ['iot', 'devices'] });
          }}
        />
      </Panel>
      {secret && (
        <>
          <MqttSettings creds={secret} />
          <SecretOnce
            label="MQTT password"
            value={String(secret['password'])}
            onDone={() => setSecret(null)}
          />
        </>
      )}
      <QueryView query={devices} what="devices">
        {(data) => (
          <DataTable
            label="Devices"
            rows={data ?? []}
            href={(r) => `/iot/devices/${encodeURIComponent(String(r['device_id']))}`}
            columns={[
              { key: 'name', label: 'Name' },
              { key: 'device_id', label: 'Device id' },
              {
                key: 'is_online',
                label: 'State',
                render: (r) => <OnlineState online={r['is_online'] === true} />,
              },
              {
                key: 'health_score',
                label: 'Health',
                render: (r) =>
                  r['health_score'] === null ? '—' : `${r['health_score']} (${String(r['health_status'])})`,
              },
              { key: 'messages_24h', label: 'Messages (24 h)' },
              { key: 'last_seen', label: 'Last seen', render: (r) => when(r['last_seen']) },
            ]}
            empty={<p>No devices yet. Register one above; it connects with the MQTT password shown once.</p>}
          />
        )}
      </QueryView>
    </section>
  );
}

/** Where a device connects, to paste into its MQTT client. */
export function MqttSettings({ creds }: { creds: Row }) {
  return (
    <dl class="facts" aria-label="MQTT settings">
      {['host', 'port', 'username', 'client_id', 'topic_root'].map((k) => (
        <div key={k}>
          <dt>{k.replace(/_/g, ' ')}</dt>
          <dd>{String(creds[k] ?? '—')}</dd>
        </div>
      ))}
      <div>
        <dt>publish telemetry to</dt>
        <dd>{`${String(creds['topic_root'])}/telemetry`}</dd>
      </div>
    </dl>
  );
}
