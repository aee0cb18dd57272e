import { useQuery, useQueryClient } from '@tanstack/preact-query';
import type { FunctionComponent } from 'preact';
import { useState } from 'preact/hooks';
import type { FjordClient } from '../../../sdk/index.js';
import { must } from '../api.js';
import { SchemaForm } from '../ui/schema-form.js';
import { DataTable, type Row } from '../ui/table.js';
import { ConfirmDelete, Panel, QueryView, SecretOnce } from '../ui/widgets.js';
import { LogStream } from './app-logs.js';
import { ClusterTimeline } from './cluster-timeline.js';
import { DatabaseSections } from './database-sections.js';
import { DnsSections } from './dns-zone.js';
import { ObjectBrowser } from './objects.js';
import { saveFile } from './save-file.js';
import { ServerSections } from './server-sections.js';

type Props = { id: string; row: Row; api: FjordClient };

export { saveFile };

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
        <QueryView query={keys} what="bucket keys">
          {(data) => (
            <DataTable
              name="keys"
              label="Bucket keys"
              rows={data}
              columns={[
                { key: 'name', label: 'Name' },
                { key: 'access_key', label: 'Access key' },
                { key: 'actions', label: 'Actions' },
              ]}
              empty={<p>No bucket keys. Create one to reach this bucket over S3.</p>}
            />
          )}
        </QueryView>
      </section>
    </>
  );
}

function ClusterSections({ id, row, api }: Props) {
  return (
    <>
      <section aria-labelledby="timeline-heading">
        <h2 id="timeline-heading">Timeline</h2>
        <ClusterTimeline id={id} />
      </section>
      <ClusterAccess id={id} row={row} api={api} />
    </>
  );
}

function ClusterAccess({ id, row, api }: Props) {
  return (
    <section aria-labelledby="kubeconfig-heading">
      <h2 id="kubeconfig-heading">Access</h2>
      <button
        type="button"
        onClick={async () => {
          const { data } = await api.GET('/v1/kubernetes/clusters/{id}/kubeconfig', {
            params: { path: { id } },
            parseAs: 'text',
          });
          saveFile(`${String(row['name'])}.kubeconfig.yaml`, String(data ?? ''), 'application/yaml');
        }}
      >
        Download kubeconfig
      </button>
    </section>
  );
}

function AppSections({ id }: Props) {
  return (
    <section aria-labelledby="logs-heading">
      <h2 id="logs-heading">Logs</h2>
      <LogStream app={id} />
    </section>
  );
}

function DomainVerificationSections({ id, row, api }: Props) {
  const queries = useQueryClient();
  const [result, setResult] = useState<string>('');
  return (
    <section aria-labelledby="check-heading">
      <h2 id="check-heading">Check</h2>
      <p>Create this record at your DNS provider, then check:</p>
      <pre class="code">{JSON.stringify(row['dns_instructions'] ?? row['instructions'], null, 2)}</pre>
      <button
        type="button"
        onClick={async () => {
          const r = await must(
            api.POST('/v1/domain-verification/domains/{domain_id}/verify', {
              params: { path: { domain_id: id } },
            }),
          );
          setResult(r.message ?? r.status);
          await queries.invalidateQueries({ queryKey: ['domain-verification'] });
        }}
      >
        Check again
      </button>
      <p role="status">{result}</p>
    </section>
  );
}

function DynSections({ id, api }: Props) {
  const [secret, setSecret] = useState<string | null>(null);
  const tokens = useQuery({
    queryKey: ['dyn', 'tokens', id],
    queryFn: async () =>
      (await must(
        api.GET('/v1/dyn/hostnames/{hostname_id}/router-tokens', { params: { path: { hostname_id: id } } }),
      )) as unknown as Row[],
  });
  const queries = useQueryClient();
  return (
    <section aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">Router tokens</h2>
      <button
        type="button"
        onClick={async () => {
          const t = await must(
            api.POST('/v1/dyn/hostnames/{hostname_id}/router-tokens', {
              params: { path: { hostname_id: id } },
              body: {} as never,
            }),
          );
          setSecret(`${t.username}:${t.password}`);
          await queries.invalidateQueries({ queryKey: ['dyn', 'tokens', id] });
        }}
      >
        Create a router token
      </button>
      {secret && (
        <SecretOnce label="Router user name and password" value={secret} onDone={() => setSecret(null)} />
      )}
      <QueryView query={tokens} what="tokens">
        {(data) => (
          <DataTable
            name="tokens"
            label="Router tokens"
            rows={Array.isArray(data) ? data : []}
            columns={[
              { key: 'username', label: 'User name' },
              { key: 'active', label: 'Active' },
              { key: 'last_used_at', label: 'Last used' },
            ]}
            empty={<p>No router tokens. Create one and enter it in your router’s DynDNS settings.</p>}
          />
        )}
      </QueryView>
    </section>
  );
}

export const AREA_SECTIONS: Record<string, FunctionComponent<Props>> = {
  storage: StorageSections,
  dns: DnsSections,
  databases: DatabaseSections,
  servers: ServerSections,
  clusters: ClusterSections,
  apps: AppSections,
  'domain-verification': DomainVerificationSections,
  dyn: DynSections,
};

export { ConfirmDelete };
