import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { FjordClient } from '../../../sdk/index.js';
import { must } from '../api.js';
import { HeadWithActions } from '../ui/table.js';
import { QueryView, SecretOnce } from '../ui/widgets.js';
import { useElapsed, useWork, WorkStatus } from '../ui/work.js';
import { at, type Db } from './database-path.js';

// A database's snapshots section and the restore form of each snapshot.

/**
 * Snapshots: take one, restore one (into this database or a new one), delete one. Taking and
 * restoring run while the request is open; the list is read every second meanwhile, so a
 * snapshot shows `creating` and then `available` with its size as the server reports them.
 */
export function DatabaseSnapshots({ db, api }: { db: Db; api: FjordClient }) {
  const queries = useQueryClient();
  const key = ['database-detail', db.db_type, db.db_name, 'snapshots'];
  const job = useWork(async () => {
    await queries.invalidateQueries({ queryKey: ['database-detail', db.db_type, db.db_name] });
    await queries.invalidateQueries({ queryKey: ['databases'] });
  });
  const { work } = job;
  const elapsed = useElapsed(work !== null);
  const [secret, setSecret] = useState<string | null>(null);
  const snaps = useQuery({
    queryKey: key,
    queryFn: () => must(api.GET('/v1/databases/{db_type}/{db_name}/snapshots', at(db))),
    refetchInterval: (q) =>
      work !== null || q.state.data?.snapshots.some((s) => s.status === 'creating') ? 1000 : false,
  });
  const [name, setName] = useState('');
  // The failure is shown in the section; nothing waits on a rejected promise here.
  const long = (what: string, call: () => Promise<string>) => job.run(what, call).catch(() => {});
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
      <WorkStatus {...job} elapsed={elapsed} />
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
                <HeadWithActions labels={['Name', 'Status', 'Size', 'Taken']} />
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
