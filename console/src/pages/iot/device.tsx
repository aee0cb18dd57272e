import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useCallback, useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';
import { Link, navigate } from '../../router.js';
import type { Row } from '../../ui/table.js';
import { ConfirmDelete, Facts, Failure, QueryView, SecretOnce } from '../../ui/widgets.js';
import { MqttSettings, OnlineState } from './devices.js';
import { TelemetryHistory } from './history.js';
import { LiveTelemetry } from './live-telemetry.js';

/** A device: its state and health, live telemetry, history, attributes, commands, credentials. */
export function DevicePage({ id }: { id: string }) {
  const api = useApi();
  const queries = useQueryClient();
  const path = { params: { path: { device_id: id } } };
  const device = useQuery({
    queryKey: ['iot', 'device', id],
    queryFn: () => must(api.GET('/v1/iot/devices/{device_id}', path)),
  });
  const health = useQuery({
    queryKey: ['iot', 'health', id],
    queryFn: () => must(api.GET('/v1/iot/devices/{device_id}/health', path)),
  });
  const [online, setOnline] = useState<boolean | null>(null);
  const onState = useCallback((o: boolean) => setOnline(o), []);
  const d = device.data as Row | undefined;
  return (
    <section>
      <p class="crumbs">
        <Link href="/iot">IoT</Link> / <span>{d ? String(d['name']) : id}</span>
      </p>
      <h1>Device: {d ? String(d['name']) : id}</h1>
      <QueryView query={device} what="the device">
        {() =>
          d && (
            <>
              <p>
                <OnlineState online={online ?? d['is_online'] === true} />
                {health.data && (
                  <>
                    {' '}
                    · Health score <strong>{health.data.health_score}</strong> ({health.data.health_status})
                  </>
                )}
              </p>
              <Facts
                data={d}
                keys={[
                  'device_id',
                  'device_type',
                  'connection_status',
                  'last_seen',
                  'firmware_version',
                  'messages_24h',
                ]}
              />
              {health.data && <Facts data={health.data.components as Record<string, unknown>} />}
              <section aria-labelledby="live-heading">
                <h2 id="live-heading">Live telemetry</h2>
                <LiveTelemetry device={id} onState={onState} />
              </section>
              <section aria-labelledby="history-heading">
                <h2 id="history-heading">History</h2>
                <TelemetryHistory device={id} />
              </section>
              <Attributes id={id} metadata={(d['metadata'] ?? {}) as Record<string, unknown>} />
              <Commands id={id} />
              <Credentials id={id} />
              <section class="danger-zone" aria-labelledby="danger-heading">
                <h2 id="danger-heading">Delete</h2>
                <ConfirmDelete
                  name={id}
                  what="device"
                  onConfirm={async () => {
                    await must(api.DELETE('/v1/iot/devices/{device_id}', path));
                    await queries.invalidateQueries({ queryKey: ['iot'] });
                    navigate('/iot');
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

/** The device's attributes (its `metadata`), edited as JSON: rules may read them (`source: attribute`). */
function Attributes({ id, metadata }: { id: string; metadata: Record<string, unknown> }) {
  const api = useApi();
  const queries = useQueryClient();
  const [text, setText] = useState(JSON.stringify(metadata, null, 2));
  const [note, setNote] = useState('');
  return (
    <section aria-labelledby="attributes-heading">
      <h2 id="attributes-heading">Attributes</h2>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          let parsed: unknown;
          try {
            parsed = JSON.parse(text || '{}');
          } catch {
            return setNote('The attributes are not valid JSON.');
          }
          try {
            await must(
              api.PATCH('/v1/iot/devices/{device_id}', {
                params: { path: { device_id: id } },
                body: { metadata: parsed } as never,
              }),
            );
            setNote('Attributes saved.');
            await queries.invalidateQueries({ queryKey: ['iot', 'device', id] });
          } catch (err) {
            setNote((err as { message?: string }).message ?? 'The attributes were not saved.');
          }
        }}
      >
        <label for="device-attributes">Attributes (a JSON object)</label>
        <textarea
          id="device-attributes"
          rows={4}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <button type="submit">Save attributes</button>
        <p role="status" class="notice">
          {note}
        </p>
      </form>
    </section>
  );
}

/** A command sent to the device now (over MQTT, to `…/commands/<name>`). */
function Commands({ id }: { id: string }) {
  const api = useApi();
  const [name, setName] = useState('');
  const [params, setParams] = useState('{}');
  const [sent, setSent] = useState<Row[]>([]);
  const [problem, setProblem] = useState<unknown>(null);
  return (
    <section aria-labelledby="commands-heading">
      <h2 id="commands-heading">Commands</h2>
      <form
        class="inline-form"
        onSubmit={async (e) => {
          e.preventDefault();
          setProblem(null);
          try {
            const c = await must(
              api.POST('/v1/iot/devices/{device_id}/commands', {
                params: { path: { device_id: id } },
                body: { name, params: JSON.parse(params || '{}') } as never,
              }),
            );
            setSent((s) => [c as unknown as Row, ...s]);
          } catch (err) {
            setProblem(err instanceof SyntaxError ? { message: 'The parameters are not valid JSON.' } : err);
          }
        }}
      >
        <label for="command-name">Command</label>
        <input id="command-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <label for="command-params">Parameters (JSON)</label>
        <input id="command-params" value={params} onInput={(e) => setParams(e.currentTarget.value)} />
        <button type="submit">Send command</button>
      </form>
      {problem ? <Failure error={problem} /> : null}
      {sent.length > 0 && (
        <ul class="sent" aria-label="Commands sent">
          {sent.map((c) => (
            <li key={String(c['command_id'])}>
              {String(c['name'])} — {String(c['status'])} to <code>{String(c['topic'])}</code> at{' '}
              {new Date(String(c['sent_at'])).toLocaleTimeString()}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** A new MQTT password: the old one stops working at once; the new one is shown once. */
function Credentials({ id }: { id: string }) {
  const api = useApi();
  const [creds, setCreds] = useState<Row | null>(null);
  return (
    <section aria-labelledby="credentials-heading">
      <h2 id="credentials-heading">Credentials</h2>
      <p>Rotating the password disconnects the device until it connects with the new one.</p>
      <button
        type="button"
        onClick={async () =>
          setCreds(
            (await must(
              api.POST('/v1/iot/devices/{device_id}/credentials/rotate', {
                params: { path: { device_id: id } },
              }),
            )) as unknown as Row,
          )
        }
      >
        Rotate password
      </button>
      {creds && (
        <>
          <MqttSettings creds={creds} />
          <SecretOnce label="MQTT password" value={String(creds['password'])} onDone={() => setCreds(null)} />
        </>
      )}
    </section>
  );
}
