import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { FjordClient } from '../../../sdk/index.js';
import { must } from '../api.js';
import { SchemaForm } from '../ui/schema-form.js';
import { HeadWithActions, type Row } from '../ui/table.js';
import { Failure, Panel, QueryView, SecretOnce } from '../ui/widgets.js';
import { at, type Db, type DbType } from './database-path.js';
import { DatabaseSnapshots } from './database-snapshots.js';

type Props = { id: string; row: Row; api: FjordClient };

/**
 * A database's page below its facts: size, connecting, firewall, snapshots. Their queries are
 * keyed apart from `['databases']`, which deleting the database invalidates: they are not read
 * again for a database that is gone.
 */
export function DatabaseSections({ id, api }: Props) {
  const [db_type, db_name] = id.split('/') as [DbType, string];
  const db = { db_type, db_name };
  return (
    <>
      <DatabaseSize db={db} api={api} />
      <Connecting db={db} api={api} />
      <Firewall db={db} api={api} />
      <DatabaseSnapshots db={db} api={api} />
    </>
  );
}

/** The database's size against the plan's allowance, and its connections against its limit. */
function DatabaseSize({ db, api }: { db: Db; api: FjordClient }) {
  const info = useQuery({
    queryKey: ['database-detail', db.db_type, db.db_name, 'info'],
    queryFn: () => must(api.GET('/v1/databases/{db_type}/{db_name}/info', at(db))),
    refetchInterval: 30_000,
  });
  const quota = useQuery({
    queryKey: ['databases', 'quota'],
    queryFn: () => must(api.GET('/v1/quota')),
    staleTime: 60_000,
  });
  return (
    <section aria-labelledby="size-heading">
      <h2 id="size-heading">Size</h2>
      <QueryView query={info} what="the size">
        {(i) => {
          const size = i.size_mb ?? 0;
          const limit = quota.data?.database_size_mb;
          return (
            <>
              <p>
                {i.size_mb === null ? 'The size is not known yet.' : `${size.toFixed(1)} MB`}
                {limit ? ` of the ${limit.toLocaleString()} MB plan ${quota.data!.plan} allows.` : '.'}
                {limit && size >= limit ? ' Writes are refused until it is smaller.' : ''}
              </p>
              {limit ? (
                <meter
                  aria-label="Size against the plan"
                  min={0}
                  max={limit}
                  low={limit * 0.8}
                  high={limit * 0.95}
                  optimum={0}
                  value={size}
                />
              ) : null}
              {i.connection_count !== null && i.connection_limit !== null && (
                <p>
                  {i.connection_count} of {i.connection_limit} connections in use.
                </p>
              )}
            </>
          );
        }}
      </QueryView>
    </section>
  );
}

/**
 * How to connect: the API's connection string (without the password, which is shown once) and
 * the same in the forms tools ask for. Rotating makes a new password and shows it once.
 */
function Connecting({ db, api }: { db: Db; api: FjordClient }) {
  const creds = useQuery({
    queryKey: ['database-detail', db.db_type, db.db_name, 'credentials'],
    queryFn: () => must(api.GET('/v1/databases/{db_type}/{db_name}/credentials', at(db))),
  });
  const [secret, setSecret] = useState<string | null>(null);
  const [problem, setProblem] = useState<unknown>(null);
  return (
    <section aria-labelledby="credentials-heading">
      <h2 id="credentials-heading">Connecting</h2>
      <QueryView query={creds} what="the connection details">
        {(c) => {
          const pg = db.db_type === 'postgresql';
          const forms: [string, string][] = [
            ['Connection string', c.connection_string],
            [
              'Command line',
              pg
                ? `psql "host=${c.host} port=${c.port} dbname=${c.database} user=${c.username}"`
                : `mariadb -h ${c.host} -P ${c.port} -u ${c.username} -p ${c.database}`,
            ],
            [
              'JDBC',
              `jdbc:${pg ? 'postgresql' : 'mariadb'}://${c.host}:${c.port}/${c.database}?user=${c.username}`,
            ],
          ];
          return (
            <dl class="facts connection-strings">
              {forms.map(([label, value]) => (
                <div key={label}>
                  <dt>{label}</dt>
                  <dd>
                    <code>{value}</code>
                  </dd>
                </div>
              ))}
            </dl>
          );
        }}
      </QueryView>
      <p>
        The password is shown once, when the database is created or its credentials are rotated. Rotating
        makes a new password at once: programs using the old one can no longer connect.
      </p>
      <button
        type="button"
        onClick={async () => {
          setProblem(null);
          try {
            const r = await must(api.POST('/v1/databases/{db_type}/{db_name}/credentials/rotate', at(db)));
            setSecret(r.connection_string.includes(r.password) ? r.connection_string : r.password);
          } catch (err) {
            setProblem(err);
          }
        }}
      >
        Rotate credentials
      </button>
      {problem ? <Failure error={problem} /> : null}
      {secret && (
        <SecretOnce label="Connection string with password" value={secret} onDone={() => setSecret(null)} />
      )}
    </section>
  );
}

/** The addresses allowed to connect: add one (the API's validation at the field), remove one. */
function Firewall({ db, api }: { db: Db; api: FjordClient }) {
  const queries = useQueryClient();
  const key = ['database-detail', db.db_type, db.db_name, 'firewall'];
  const rules = useQuery({
    queryKey: key,
    queryFn: () => must(api.GET('/v1/databases/{db_type}/{db_name}/firewall', at(db))),
  });
  const [problem, setProblem] = useState<unknown>(null);
  return (
    <section aria-labelledby="firewall-heading">
      <h2 id="firewall-heading">Firewall</h2>
      <Panel title="Allow an address">
        <SchemaForm
          operationId="addDatabaseFirewallRule"
          fields={['ip_address', 'description']}
          labels={{ ip_address: 'IP address or network (CIDR)' }}
          submitLabel="Add rule"
          onSubmit={async (body) => {
            await must(
              api.POST('/v1/databases/{db_type}/{db_name}/firewall', { ...at(db), body: body as never }),
            );
            await queries.invalidateQueries({ queryKey: key });
          }}
        />
      </Panel>
      <QueryView query={rules} what="firewall rules">
        {(r) =>
          r.rules.length === 0 ? (
            <p class="empty">No rules: no address may connect. Allow your application’s address above.</p>
          ) : (
            <table>
              <caption class="visually-hidden">Firewall rules</caption>
              <HeadWithActions labels={['Address', 'Port', 'Description']} />
              <tbody>
                {r.rules.map((rule) => (
                  <tr key={rule.rule_id}>
                    <td>{rule.ip_address}</td>
                    <td>{rule.port}</td>
                    <td>{rule.description ?? '—'}</td>
                    <td class="row-actions">
                      <button
                        type="button"
                        class="danger"
                        aria-label={`Remove rule ${rule.ip_address}`}
                        onClick={async () => {
                          setProblem(null);
                          try {
                            await must(
                              api.DELETE('/v1/databases/{db_type}/{db_name}/firewall/{rule_id}', {
                                params: { path: { ...db, rule_id: rule.rule_id } },
                              }),
                            );
                            await queries.invalidateQueries({ queryKey: key });
                          } catch (err) {
                            setProblem(err);
                          }
                        }}
                      >
                        Remove
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </QueryView>
      {problem ? <Failure error={problem} /> : null}
    </section>
  );
}
