import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { must } from '../api.js';
import { useApi } from '../context.js';
import { SchemaForm } from '../ui/schema-form.js';
import { DataTable, type Row } from '../ui/table.js';
import { ConfirmDelete, Panel, QueryView, SecretOnce } from '../ui/widgets.js';

/** Personal access tokens and service keys (secret shown once, revocable), and SSH keys with fingerprints. */
export function ApiKeysPage() {
  const api = useApi();
  const queries = useQueryClient();
  const keys = useQuery({
    queryKey: ['api-keys', 'keys'],
    queryFn: async () => (await must(api.GET('/v1/account/api-keys'))) as Row[],
  });
  const ssh = useQuery({
    queryKey: ['api-keys', 'ssh'],
    queryFn: async () => (await must(api.GET('/v1/account/ssh-keys'))) as Row[],
  });
  const [secret, setSecret] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  const refresh = () => queries.invalidateQueries({ queryKey: ['api-keys'] });
  const nameOf = (r: Row) => String(r['description'] || r['key_prefix']);
  return (
    <section>
      <h1>API keys</h1>
      <p class="intro">Keys for the API and the CLI, and the SSH keys put on your servers.</p>
      <p role="status" class="notice">
        {notice}
      </p>
      <section aria-labelledby="pat-heading">
        <h2 id="pat-heading">Access keys</h2>
        <Panel title="Create a personal access token">
          <SchemaForm
            operationId="createPat"
            fields={['description', 'scopes', 'expires_in_days']}
            labels={{
              description: 'Name',
              scopes: 'Scopes (such as dns:read, storage:write)',
              expires_in_days: 'Expires in (days)',
            }}
            submitLabel="Create token"
            onSubmit={async (body) => {
              const k = await must(api.POST('/v1/account/api-keys/pat', { body: body as never }));
              setSecret(k.key);
              setNotice('The token was created.');
              await refresh();
            }}
          />
        </Panel>
        {secret && <SecretOnce label="Token" value={secret} onDone={() => setSecret(null)} />}
        <QueryView query={keys} what="keys">
          {(data) => (
            <DataTable
              name="keys"
              label="Access keys"
              rows={(data ?? []).filter((k) => k['is_active'] !== false)}
              columns={[
                { key: 'description', label: 'Name', render: nameOf },
                { key: 'key_prefix', label: 'Starts with' },
                { key: 'key_type', label: 'Kind' },
                {
                  key: 'scopes',
                  label: 'Scopes',
                  render: (r) => (r['scopes'] as string[] | undefined)?.join(', ') ?? '—',
                },
                { key: 'expires_at', label: 'Expires' },
                { key: 'last_used_at', label: 'Last used' },
              ]}
              actions={(r) => (
                <ConfirmDelete
                  name={nameOf(r)}
                  what="key"
                  action="Revoke"
                  onConfirm={async () => {
                    await must(
                      api.DELETE('/v1/account/api-keys/{key_id}', {
                        params: { path: { key_id: String(r['id']) } },
                      }),
                    );
                    setNotice(`The key ${nameOf(r)} was revoked.`);
                    await refresh();
                  }}
                />
              )}
              empty={<p>No keys. Create a token above to use the API or the CLI.</p>}
            />
          )}
        </QueryView>
      </section>
      <section aria-labelledby="ssh-heading">
        <h2 id="ssh-heading">SSH keys</h2>
        <Panel title="Add an SSH key">
          <SchemaForm
            operationId="addSshKey"
            labels={{ public_key: 'Public key (ssh-ed25519 … or ssh-rsa …)' }}
            submitLabel="Add SSH key"
            onSubmit={async (body) => {
              await must(api.POST('/v1/account/ssh-keys', { body: body as never }));
              setNotice('The SSH key was added.');
              await refresh();
            }}
          />
        </Panel>
        <QueryView query={ssh} what="SSH keys">
          {(data) => (
            <DataTable
              name="ssh"
              label="SSH keys"
              rows={data ?? []}
              columns={[
                { key: 'name', label: 'Name' },
                { key: 'key_type', label: 'Type' },
                { key: 'fingerprint', label: 'Fingerprint' },
                { key: 'vm_count', label: 'Servers' },
              ]}
              actions={(r) => (
                <ConfirmDelete
                  name={String(r['name'])}
                  what="SSH key"
                  onConfirm={async () => {
                    await must(
                      api.DELETE('/v1/account/ssh-keys/{key_id}', {
                        params: { path: { key_id: String(r['id']) } },
                      }),
                    );
                    setNotice(`The SSH key ${String(r['name'])} was deleted.`);
                    await refresh();
                  }}
                />
              )}
              empty={<p>No SSH keys. Add your public key to log in to the servers you create.</p>}
            />
          )}
        </QueryView>
      </section>
    </section>
  );
}
