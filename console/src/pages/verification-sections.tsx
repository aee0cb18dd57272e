import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { FjordClient } from '../../../sdk/index.js';
import { must } from '../api.js';
import { DataTable, type Row } from '../ui/table.js';
import { ConfirmDelete, Failure, QueryView, SecretOnce } from '../ui/widgets.js';

type Props = { id: string; row: Row; api: FjordClient };

interface Instructions {
  method: string;
  record_type: string;
  record_name: string;
  record_value: string;
  ttl_recommendation: number;
  example_bind: string;
  auto_verified: boolean;
  message: string;
  cname_record_name: string | null;
  cname_record_value: string | null;
}

/** A domain to verify: the record to create, its status, a re-check and what each check found. */
export function DomainVerificationSections({ id, row, api }: Props) {
  const queries = useQueryClient();
  const [result, setResult] = useState<{ message: string; found: string[] } | null>(null);
  const [problem, setProblem] = useState<unknown>(null);
  const history = useQuery({
    queryKey: ['domain-verification', 'history', id],
    queryFn: async () =>
      (await must(
        api.GET('/v1/domain-verification/domains/{domain_id}/history', {
          params: { path: { domain_id: id } },
        }),
      )) as unknown as Row[],
  });
  const how = row['instructions'] as Instructions | undefined;
  const records: Row[] = how
    ? [
        {
          type: how.record_type,
          name: how.record_name,
          value: how.record_value,
          ttl: how.ttl_recommendation,
        },
        ...(how.cname_record_name
          ? [
              {
                type: 'CNAME',
                name: how.cname_record_name,
                value: how.cname_record_value,
                ttl: how.ttl_recommendation,
              },
            ]
          : []),
      ]
    : [];
  return (
    <>
      <section aria-labelledby="records-heading">
        <h2 id="records-heading">Record to create</h2>
        <p>
          The domain is <strong>{String(row['status'])}</strong>.{' '}
          {how?.auto_verified
            ? 'Fjord serves this domain’s DNS: it was verified without a record.'
            : (how?.message ?? 'Create this record at your DNS provider, then check.')}
        </p>
        {!how?.auto_verified && (
          <>
            <DataTable
              name="records"
              label="Records to create"
              rows={records}
              columns={[
                { key: 'type', label: 'Type' },
                { key: 'name', label: 'Name' },
                { key: 'value', label: 'Value' },
                { key: 'ttl', label: 'TTL' },
              ]}
              empty={<p>No record is needed.</p>}
            />
            {how?.example_bind && <pre class="code">{how.example_bind}</pre>}
          </>
        )}
      </section>
      <section aria-labelledby="check-heading">
        <h2 id="check-heading">Check</h2>
        <button
          type="button"
          onClick={async () => {
            setProblem(null);
            try {
              const r = await must(
                api.POST('/v1/domain-verification/domains/{domain_id}/verify', {
                  params: { path: { domain_id: id } },
                }),
              );
              setResult({ message: r.message || r.status, found: r.dns_records_found });
            } catch (err) {
              setProblem(err);
            }
            await queries.invalidateQueries({ queryKey: ['domain-verification'] });
          }}
        >
          Check again
        </button>
        <p role="status">
          {result
            ? `${result.message}${result.found.length ? ` Found: ${result.found.join(', ')}.` : ''}`
            : ''}
        </p>
        {problem ? <Failure error={problem} /> : null}
        <QueryView query={history} what="the checks">
          {(list) => (
            <DataTable
              name="checks"
              label="Checks"
              rows={list.map((h) => ({
                ...h,
                found: (h['dns_response'] as { actual_values?: string[] } | undefined)?.actual_values?.join(
                  ', ',
                ),
              }))}
              columns={[
                { key: 'created_at', label: 'When' },
                { key: 'event_type', label: 'Event' },
                { key: 'new_status', label: 'Status' },
                { key: 'found', label: 'Values found' },
                { key: 'performed_by', label: 'By' },
              ]}
              empty={<p>Not checked yet.</p>}
            />
          )}
        </QueryView>
      </section>
    </>
  );
}

/** A DynDNS hostname: router tokens (the password shown once, revocable) and its latest updates. */
export function DynSections({ id, api }: Props) {
  const queries = useQueryClient();
  const [secret, setSecret] = useState<string | null>(null);
  const tokens = useQuery({
    queryKey: ['dyn', 'tokens', id],
    queryFn: async () =>
      (await must(
        api.GET('/v1/dyn/hostnames/{hostname_id}/router-tokens', { params: { path: { hostname_id: id } } }),
      )) as unknown as Row[],
  });
  const updates = useQuery({
    queryKey: ['dyn', 'updates', id],
    queryFn: async () =>
      (
        await must(
          api.GET('/v1/dyn/hostnames/{hostname_id}/updates', { params: { path: { hostname_id: id } } }),
        )
      ).updates as unknown as Row[],
    refetchInterval: 30_000,
  });
  return (
    <>
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
          {(list) => (
            <DataTable
              name="tokens"
              label="Router tokens"
              rows={Array.isArray(list) ? list : []}
              columns={[
                { key: 'username', label: 'User name' },
                { key: 'active', label: 'Active' },
                { key: 'created_at', label: 'Created' },
                { key: 'last_used_at', label: 'Last used' },
              ]}
              actions={(t) => (
                <ConfirmDelete
                  name={String(t['username'])}
                  what="token"
                  action="Revoke"
                  onConfirm={async () => {
                    await must(
                      api.DELETE('/v1/dyn/hostnames/{hostname_id}/router-tokens/{credential_id}', {
                        params: { path: { hostname_id: id, credential_id: String(t['id']) } },
                      }),
                    );
                    await queries.invalidateQueries({ queryKey: ['dyn', 'tokens', id] });
                  }}
                />
              )}
              empty={<p>No router tokens. Create one and enter it in your router’s DynDNS settings.</p>}
            />
          )}
        </QueryView>
      </section>
      <section aria-labelledby="updates-heading">
        <h2 id="updates-heading">Updates</h2>
        <QueryView query={updates} what="updates">
          {(list) => (
            <DataTable
              name="updates"
              label="Updates"
              rows={list}
              columns={[
                { key: 'created_at', label: 'When' },
                { key: 'result', label: 'Result' },
                { key: 'ipv4', label: 'IPv4' },
                { key: 'ipv6', label: 'IPv6' },
                { key: 'client_ip', label: 'From' },
              ]}
              empty={<p>No updates yet. Your router sends one when its address changes.</p>}
            />
          )}
        </QueryView>
      </section>
    </>
  );
}
