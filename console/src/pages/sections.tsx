import { useQuery, useQueryClient } from '@tanstack/preact-query';
import type { FunctionComponent, VNode } from 'preact';
import { useState } from 'preact/hooks';
import type { FjordClient } from '../../../sdk/index.js';
import { must } from '../api.js';
import { SchemaForm } from '../ui/schema-form.js';
import { DataTable, type Row } from '../ui/table.js';
import { ConfirmDelete, Panel, QueryView, SecretOnce } from '../ui/widgets.js';
import { CreateAppFromUpload } from './app-image.js';
import { AppSections } from './app-sections.js';
import { ClusterSections } from './cluster-sections.js';
import { DatabaseSections } from './database-sections.js';
import { DnsSections } from './dns-zone.js';
import { ObjectBrowser } from './objects.js';
import { saveFile } from './save-file.js';
import { ServerSections } from './server-sections.js';
import { DomainVerificationSections, DynSections } from './verification-sections.js';

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

/** What an area's list page shows above its list besides the create form. */
export const AREA_LIST_EXTRAS: Record<string, () => VNode> = {
  apps: () => <CreateAppFromUpload />,
};

export { ConfirmDelete };
