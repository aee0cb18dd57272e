import { useQuery, useQueryClient } from '@tanstack/preact-query';
import type { FunctionComponent, VNode } from 'preact';
import { useState } from 'preact/hooks';
import type { FjordClient } from '../../../sdk/index.js';
import { must } from '../api.js';
import { SchemaForm } from '../ui/schema-form.js';
import { DataTable, type Row } from '../ui/table.js';
import { ConfirmDelete, Failure, Panel, SecretOnce } from '../ui/widgets.js';
import { CreateAppFromUpload } from './app-image.js';
import { AppSections } from './app-sections.js';
import { ClusterSections } from './cluster-sections.js';
import { RecordEditor } from './dns-records.js';
import { ObjectBrowser } from './objects.js';
import { saveFile } from './save-file.js';
import { ServerTerminal } from './server-terminal.js';
import { DomainVerificationSections, DynSections } from './verification-sections.js';

type Props = { id: string; row: Row; api: FjordClient };

export { saveFile } from './save-file.js';

function StorageSections({ id, row, api }: Props) {
  const queries = useQueryClient();
  const keys = useQuery({
    queryKey: ['storage', 'keys', id],
    queryFn: async () =>
      (await must(
        api.GET('/v1/storage/buckets/{bucket_name}/keys', { params: { path: { bucket_name: id } } }),
      )) as Row[],
  });
  const [secret, setSecret] = useState<string | null>(null);
  return (
    <>
      <section aria-labelledby="objects-heading">
        <h2 id="objects-heading">Objects</h2>
        <ObjectBrowser bucket={id} />
      </section>
      <section aria-labelledby="visibility-heading">
        <h2 id="visibility-heading">Visibility</h2>
        <p>
          {row['is_public']
            ? 'Anyone may read this bucket’s objects.'
            : 'Only keys you create may read this bucket.'}
        </p>
        <button
          type="button"
          onClick={async () => {
            await must(
              api.PATCH('/v1/storage/buckets/{bucket_name}/visibility', {
                params: { path: { bucket_name: id } },
                body: { is_public: !row['is_public'] } as never,
              }),
            );
            await queries.invalidateQueries({ queryKey: ['storage'] });
          }}
        >
          {row['is_public'] ? 'Make private' : 'Make public'}
        </button>
      </section>
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">Bucket keys</h2>
        <Panel title="Create a bucket key">
          <SchemaForm
            operationId="createStorageBucketKey"
            fields={['name', 'description', 'actions']}
            submitLabel="Create key"
            onSubmit={async (body) => {
              const k = await must(
                api.POST('/v1/storage/buckets/{bucket_name}/keys', {
                  params: { path: { bucket_name: id } },
                  body: body as never,
                }),
              );
              setSecret(`${k.access_key}:${k.secret_key}`);
              await queries.invalidateQueries({ queryKey: ['storage', 'keys', id] });
            }}
          />
        </Panel>
        {secret && <SecretOnce label="Access key and secret" value={secret} onDone={() => setSecret(null)} />}
        {keys.data && (
          <DataTable
            name="keys"
            label="Bucket keys"
            rows={keys.data}
            columns={[
              { key: 'name', label: 'Name' },
              { key: 'access_key', label: 'Access key' },
              { key: 'actions', label: 'Actions' },
            ]}
            empty={<p>No bucket keys. Create one to reach this bucket over S3.</p>}
          />
        )}
      </section>
    </>
  );
}

function DnsSections({ id, api }: Props) {
  const queries = useQueryClient();
  const [ds, setDs] = useState<unknown[] | null>(null);
  const zone = useQuery({
    queryKey: ['dns', 'detail', id],
    queryFn: async () =>
      (await must(api.GET('/v1/dns/zones/{zone_name}', { params: { path: { zone_name: id } } }))) as Row,
  });
  const dnssec = zone.data?.['dnssec_enabled'] === true;
  return (
    <>
      <RecordEditor zone={id} />
      <section aria-labelledby="dnssec-heading">
        <h2 id="dnssec-heading">DNSSEC</h2>
        <p>{dnssec ? 'DNSSEC is on: answers are signed.' : 'DNSSEC is off.'}</p>
        <button
          type="button"
          onClick={async () => {
            if (dnssec) {
              await must(
                api.DELETE('/v1/dns/zones/{zone_name}/dnssec', { params: { path: { zone_name: id } } }),
              );
              setDs(null);
            } else {
              const r = await must(
                api.POST('/v1/dns/zones/{zone_name}/dnssec/activate', {
                  params: { path: { zone_name: id } },
                }),
              );
              setDs(r.ds_records as unknown[]);
            }
            await queries.invalidateQueries({ queryKey: ['dns'] });
          }}
        >
          {dnssec ? 'Turn DNSSEC off' : 'Turn DNSSEC on'}
        </button>
        {ds && (
          <>
            <p>Give your registrar this DS record:</p>
            <pre class="code">
              {ds.map((d) => (typeof d === 'string' ? d : JSON.stringify(d))).join('\n')}
            </pre>
          </>
        )}
      </section>
      <section aria-labelledby="zonefile-heading">
        <h2 id="zonefile-heading">Zone file</h2>
        <button
          type="button"
          onClick={async () => {
            const { data } = await api.GET('/v1/dns/zones/{zone_name}/export', {
              params: { path: { zone_name: id } },
              parseAs: 'text',
            });
            saveFile(`${id}.zone`, String(data ?? ''));
          }}
        >
          Export zone file
        </button>
      </section>
    </>
  );
}

function DatabaseSections({ id, api }: Props) {
  const [db_type, db_name] = id.split('/') as [string, string];
  const [secret, setSecret] = useState<string | null>(null);
  return (
    <section aria-labelledby="credentials-heading">
      <h2 id="credentials-heading">Credentials</h2>
      <p>The password is shown once, when the database is created or its credentials are rotated.</p>
      <button
        type="button"
        onClick={async () => {
          const r = await must(
            api.POST('/v1/databases/{db_type}/{db_name}/credentials/rotate', {
              params: { path: { db_type: db_type as never, db_name } },
            }),
          );
          setSecret(r.connection_string ?? r.password ?? '');
        }}
      >
        Rotate credentials
      </button>
      {secret && <SecretOnce label="Connection string" value={secret} onDone={() => setSecret(null)} />}
    </section>
  );
}

function ServerSections({ id, row, api }: Props) {
  const queries = useQueryClient();
  const [problem, setProblem] = useState<unknown>(null);
  const act =
    (path: '/v1/vps/{vps_id}/start' | '/v1/vps/{vps_id}/stop' | '/v1/vps/{vps_id}/reboot') => async () => {
      setProblem(null);
      try {
        await must(api.POST(path, { params: { path: { vps_id: id } } }));
      } catch (err) {
        setProblem(err);
      }
      await queries.invalidateQueries({ queryKey: ['servers'] });
    };
  return (
    <section aria-labelledby="power-heading">
      <h2 id="power-heading">Power</h2>
      <p>The server is {String(row['status'])}.</p>
      <div class="actions">
        <button type="button" onClick={act('/v1/vps/{vps_id}/start')}>
          Start
        </button>
        <button type="button" onClick={act('/v1/vps/{vps_id}/stop')}>
          Stop
        </button>
        <button type="button" onClick={act('/v1/vps/{vps_id}/reboot')}>
          Reboot
        </button>
      </div>
      {problem ? <Failure error={problem} /> : null}
    </section>
  );
}

/** The terminal is opened on demand: it logs in to the server, which a page visit should not do. */
function ServerConsole({ id, row }: Props) {
  const [shown, setShown] = useState(false);
  return (
    <section aria-labelledby="terminal-heading">
      <h2 id="terminal-heading">Terminal</h2>
      {shown ? (
        <ServerTerminal id={id} />
      ) : (
        <>
          <p>A shell on the server as root, in the browser. The server must be running.</p>
          <button type="button" disabled={row['status'] !== 'running'} onClick={() => setShown(true)}>
            Open terminal
          </button>
        </>
      )}
    </section>
  );
}

export const AREA_SECTIONS: Record<string, FunctionComponent<Props>> = {
  storage: StorageSections,
  dns: DnsSections,
  databases: DatabaseSections,
  servers: (p: Props) => (
    <>
      <ServerSections {...p} />
      <ServerConsole {...p} />
    </>
  ),
  clusters: ClusterSections,
  apps: AppSections,
  'domain-verification': DomainVerificationSections,
  dyn: DynSections,
};

/** What an area's list page shows above its list besides the create form. */
export const AREA_LIST_EXTRAS: Record<string, () => VNode> = {
  apps: () => <CreateAppFromUpload />,
};

export { ConfirmDelete };
