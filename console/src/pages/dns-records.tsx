import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { type ApiProblem, must } from '../api.js';
import { useApi } from '../context.js';
import { SchemaForm } from '../ui/schema-form.js';
import { HeadWithActions } from '../ui/table.js';
import { QueryView } from '../ui/widgets.js';

interface DnsRecord {
  id: string;
  name: string;
  type: string;
  content: string;
  ttl: number;
  priority: number | null;
}

/**
 * A zone's records, edited in place: each row turns into a form (host, value, TTL, priority)
 * whose errors are the API's own, shown at the field; a new record is added with the form drawn
 * from the create schema.
 */
export function RecordEditor({ zone }: { zone: string }) {
  const api = useApi();
  const queries = useQueryClient();
  const key = ['dns', 'records', zone];
  const records = useQuery({
    queryKey: key,
    queryFn: async () =>
      (await must(api.GET('/v1/dns/zones/{zone_name}/records', { params: { path: { zone_name: zone } } })))
        .records as DnsRecord[],
  });
  const [editing, setEditing] = useState<string | null>(null);
  const refresh = () => queries.invalidateQueries({ queryKey: ['dns'] });
  return (
    <section aria-labelledby="records-heading">
      <h2 id="records-heading">Records</h2>
      <details class="panel">
        <summary>Add a record</summary>
        <SchemaForm
          operationId="createDnsRecord"
          fields={['record_type', 'host', 'record', 'ttl', 'priority']}
          labels={{ record_type: 'Type', host: 'Host', record: 'Value', ttl: 'TTL (seconds)' }}
          options={{ record_type: ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'SRV', 'CAA', 'NS'] }}
          submitLabel="Add record"
          onSubmit={async (body) => {
            await must(
              api.POST('/v1/dns/zones/{zone_name}/records', {
                params: { path: { zone_name: zone } },
                body: body as never,
              }),
            );
            await refresh();
          }}
        />
      </details>
      <QueryView query={records} what="records">
        {(list) =>
          list.length === 0 ? (
            <p class="empty">No records yet. Add the first one above.</p>
          ) : (
            <table>
              <caption class="visually-hidden">Records of {zone}</caption>
              <HeadWithActions labels={['Host', 'Type', 'Value', 'TTL']} />
              <tbody>
                {list.map((r) =>
                  editing === r.id ? (
                    <tr key={r.id}>
                      <td colSpan={5}>
                        <SchemaForm
                          operationId="updateDnsRecord"
                          idPrefix={`edit-${r.id}`}
                          fields={['host', 'record', 'ttl', 'priority']}
                          labels={{ host: 'Host', record: 'Value', ttl: 'TTL (seconds)' }}
                          initial={{
                            host: hostOf(r.name, zone),
                            record: r.content,
                            ttl: r.ttl,
                            ...(r.priority !== null ? { priority: r.priority } : {}),
                          }}
                          submitLabel="Save record"
                          onSubmit={async (body) => {
                            await must(
                              api.PUT('/v1/dns/zones/{zone_name}/records/{record_id}', {
                                params: { path: { zone_name: zone, record_id: r.id } },
                                body: body as never,
                              }),
                            );
                            setEditing(null);
                            await refresh();
                          }}
                        />
                        <button type="button" onClick={() => setEditing(null)}>
                          Cancel
                        </button>
                      </td>
                    </tr>
                  ) : (
                    <tr key={r.id}>
                      <td>{r.name}</td>
                      <td>{r.type}</td>
                      <td class="wrap">{r.content}</td>
                      <td>{r.ttl}</td>
                      <td class="row-actions">
                        <button
                          type="button"
                          aria-label={`Edit ${r.type} record ${r.name}`}
                          onClick={() => setEditing(r.id)}
                        >
                          Edit
                        </button>
                        <DeleteRecord zone={zone} record={r} onDone={refresh} />
                      </td>
                    </tr>
                  ),
                )}
              </tbody>
            </table>
          )
        }
      </QueryView>
    </section>
  );
}

/** The host part of a record's name within its zone (`www` of www.example.com, `@` for the apex). */
function hostOf(name: string, zone: string): string {
  const n = name.replace(/\.$/, '');
  if (n === zone) return '@';
  return n.endsWith(`.${zone}`) ? n.slice(0, -zone.length - 1) : n;
}

/** One record's deletion: small enough to confirm with a second click rather than a typed name. */
function DeleteRecord({
  zone,
  record,
  onDone,
}: {
  zone: string;
  record: DnsRecord;
  onDone(): Promise<unknown>;
}) {
  const api = useApi();
  const [asking, setAsking] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  if (!asking)
    return (
      <button
        type="button"
        class="danger"
        aria-label={`Delete ${record.type} record ${record.name}`}
        onClick={() => setAsking(true)}
      >
        Delete
      </button>
    );
  return (
    <>
      <button
        type="button"
        class="danger"
        onClick={async () => {
          try {
            await must(
              api.DELETE('/v1/dns/zones/{zone_name}/records/{record_id}', {
                params: { path: { zone_name: zone, record_id: record.id } },
              }),
            );
            await onDone();
          } catch (err) {
            setProblem(err as ApiProblem);
          }
        }}
      >
        Really delete {record.type} {record.name}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Keep
      </button>
      {problem && (
        <span class="error" role="alert">
          {problem.message}
        </span>
      )}
    </>
  );
}
