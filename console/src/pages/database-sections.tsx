import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useEffect, useState } from 'preact/hooks';
import type { FjordClient } from '../../../sdk/index.js';
import { must } from '../api.js';
import { SchemaForm } from '../ui/schema-form.js';
import type { Row } from '../ui/table.js';
import { Failure, Panel, QueryView, SecretOnce } from '../ui/widgets.js';

type Props = { id: string; row: Row; api: FjordClient };
type DbType = 'postgresql' | 'mariadb';

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
      <Snapshots db={db} api={api} />
    </>
  );
}

type Db = { db_type: DbType; db_name: string };
const at = (db: Db) => ({ params: { path: db } });

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
              <thead>
                <tr>
                  <th scope="col">Address</th>
                  <th scope="col">Port</th>
                  <th scope="col">Description</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
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

/** Seconds since `since` while `running`, for a long request's progress line. */
function useElapsed(running: boolean): number {
  const [seconds, setSeconds] = useState(0);
  useEffect(() => {
    if (!running) return;
    setSeconds(0);
    const started = Date.now();
    const tick = setInterval(() => setSeconds(Math.floor((Date.now() - started) / 1000)), 500);
    return () => clearInterval(tick);
  }, [running]);
  return seconds;
}

/**
 * Snapshots: take one, restore one (into this database or a new one), delete one. Taking and
 * restoring run while the request is open; the list is read every second meanwhile, so a
 * snapshot shows `creating` and then `available` with its size as the server reports them.
 */
function Snapshots({ db, api }: { db: Db; api: FjordClient }) {
  const queries = useQueryClient();
  const key = ['database-detail', db.db_type, db.db_name, 'snapshots'];
  const [work, setWork] = useState<string | null>(null);
  const elapsed = useElapsed(work !== null);
  const [problem, setProblem] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const snaps = useQuery({
    queryKey: key,
    queryFn: () => must(api.GET('/v1/databases/{db_type}/{db_name}/snapshots', at(db))),
    refetchInterval: (q) =>
      work !== null || q.state.data?.snapshots.some((s) => s.status === 'creating') ? 1000 : false,
  });
  const [name, setName] = useState('');
  const long = async (what: string, call: () => Promise<string>) => {
    setWork(what);
    setProblem(null);
    setNotice('');
    try {
      setNotice(await call());
    } catch (err) {
      setProblem(err);
    } finally {
      setWork(null);
      await queries.invalidateQueries({ queryKey: ['database-detail', db.db_type, db.db_name] });
      await queries.invalidateQueries({ queryKey: ['databases'] });
    }
  };
  return (
    <section aria-labelledby="snapshots-heading">
      <h2 id="snapshots-heading">Snapshots</h2>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void long(`Taking snapshot ${name || '(named by time)'}`, async () => {
            const s = await must(
              api.POST('/v1/databases/{db_type}/{db_name}/snapshots', {
                ...at(db),
                body: (name ? { name } : {}) as never,
              }),
            );
            setName('');
            return `Snapshot ${s.name} is ${s.status}.`;
          });
        }}
      >
        <label for="snapshot-name">Snapshot name (optional)</label>
        <input id="snapshot-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit" disabled={work !== null}>
          Take snapshot
        </button>
      </form>
      {work && (
        <div class="progress-line">
          <progress aria-label={work} />
          <span role="status">
            {work}… {elapsed} s
          </span>
        </div>
      )}
      <p role="status" class="notice">
        {notice}
      </p>
      {problem ? <Failure error={problem} /> : null}
      {secret && (
        <SecretOnce label="New database connection string" value={secret} onDone={() => setSecret(null)} />
      )}
      <QueryView query={snaps} what="snapshots">
        {(s) =>
          s.snapshots.length === 0 ? (
            <p class="empty">
              No snapshots yet. Take one before a risky change; restore it if it goes wrong.
            </p>
          ) : (
            <>
              <p>
                {s.total} of {s.max_snapshots} snapshots.
              </p>
              <table>
                <caption class="visually-hidden">Snapshots</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Status</th>
                    <th scope="col">Size</th>
                    <th scope="col">Taken</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {s.snapshots.map((snap) => (
                    <tr key={snap.snapshot_id}>
                      <td>{snap.name}</td>
                      <td>{snap.status}</td>
                      <td>{snap.size_bytes === null ? '—' : `${(snap.size_bytes / 1024).toFixed(1)} KB`}</td>
                      <td>{new Date(snap.created_at).toLocaleString()}</td>
                      <td class="row-actions">
                        {snap.status === 'available' && (
                          <RestoreSnapshot
                            db={db}
                            snapshot={snap}
                            busy={work !== null}
                            onRestore={(target) =>
                              long(`Restoring ${snap.name} into ${target ?? db.db_name}`, async () => {
                                const r = await must(
                                  api.POST('/v1/databases/{db_type}/{db_name}/restore', {
                                    ...at(db),
                                    body: {
                                      snapshot_id: snap.snapshot_id,
                                      ...(target ? { target_db_name: target } : {}),
                                    },
                                  }),
                                );
                                if (r.new_database) setSecret(r.new_database.connection_string);
                                return r.message;
                              })
                            }
                          />
                        )}
                        <button
                          type="button"
                          class="danger"
                          disabled={work !== null}
                          aria-label={`Delete snapshot ${snap.name}`}
                          onClick={() =>
                            long(`Deleting ${snap.name}`, async () => {
                              await must(
                                api.DELETE('/v1/databases/{db_type}/{db_name}/snapshots/{snapshot_id}', {
                                  params: { path: { ...db, snapshot_id: snap.snapshot_id } },
                                }),
                              );
                              return `Snapshot ${snap.name} was deleted.`;
                            })
                          }
                        >
                          Delete
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )
        }
      </QueryView>
    </section>
  );
}

/**
 * Restore into a new database (nothing is lost), or over this one, which replaces its contents
 * and so is confirmed by typing the database's name.
 */
function RestoreSnapshot({
  db,
  snapshot,
  busy,
  onRestore,
}: {
  db: Db;
  snapshot: { snapshot_id: string; name: string };
  busy: boolean;
  onRestore(target: string | null): Promise<void>;
}) {
  const [open, setOpen] = useState(false);
  const [target, setTarget] = useState('');
  const [typed, setTyped] = useState('');
  const [inPlace, setInPlace] = useState(false);
  const idp = `restore-${snapshot.snapshot_id}`;
  if (!open)
    return (
      <button type="button" disabled={busy} onClick={() => setOpen(true)}>
        Restore {snapshot.name}
      </button>
    );
  const ready = inPlace ? typed === db.db_name : target.trim() !== '';
  return (
    <form
      class="confirm"
      onSubmit={(e) => {
        e.preventDefault();
        setOpen(false);
        void onRestore(inPlace ? null : target.trim());
      }}
    >
      <fieldset>
        <legend>Restore {snapshot.name} into</legend>
        <label class="check">
          <input type="radio" name={`${idp}-where`} checked={!inPlace} onChange={() => setInPlace(false)} />a
          new database
        </label>
        <label class="check">
          <input type="radio" name={`${idp}-where`} checked={inPlace} onChange={() => setInPlace(true)} />
          this database, replacing its contents
        </label>
      </fieldset>
      {inPlace ? (
        <>
          <label for={`${idp}-confirm`}>Type {db.db_name} to confirm</label>
          <input
            id={`${idp}-confirm`}
            value={typed}
            autoComplete="off"
            onInput={(e) => setTyped(e.currentTarget.value)}
          />
        </>
      ) : (
        <>
          <label for={`${idp}-target`}>New database name</label>
          <input id={`${idp}-target`} value={target} onInput={(e) => setTarget(e.currentTarget.value)} />
        </>
      )}
      <div class="actions">
        <button type="submit" class={inPlace ? 'danger' : ''} disabled={!ready || busy}>
          Restore now
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
