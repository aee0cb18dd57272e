import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { FjordClient } from '../../../sdk/index.js';
import { must } from '../api.js';
import { ConfirmDelete, QueryView } from '../ui/widgets.js';
import { useWork, WorkStatus } from '../ui/work.js';
import type { Allowed } from './server-sections.js';

// A server's copies of its disk, each a section of its page: snapshots kept on the server to roll
// back to, and backups kept apart from it. Both follow the server's state through `can`.

/** A long request on the server, after which its page and the servers list are read again. */
function useServerWork(id: string) {
  const queries = useQueryClient();
  return useWork(async () => {
    await queries.invalidateQueries({ queryKey: ['server-detail', id] });
    await queries.invalidateQueries({ queryKey: ['servers'] });
  });
}

export function ServerSnapshots({ id, api, can }: { id: string; api: FjordClient; can: Allowed }) {
  const job = useServerWork(id);
  const { work, run } = job;
  const key = ['server-detail', id, 'snapshots'];
  const snaps = useQuery({
    queryKey: key,
    queryFn: () => must(api.GET('/v1/vps/{vps_id}/snapshots', { params: { path: { vps_id: id } } })),
  });
  const [name, setName] = useState('');
  const path = { params: { path: { vps_id: id } } };
  return (
    <section aria-labelledby="snapshots-heading">
      <h2 id="snapshots-heading">Snapshots</h2>
      <p>
        A snapshot keeps the disk as it is, on this server, to roll back to. The server must be stopped to
        take one or roll back.
      </p>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          run(`Taking snapshot ${name}`, async () => {
            const r = await must(api.POST('/v1/vps/{vps_id}/snapshots', { ...path, body: { name } }));
            setName('');
            return `Snapshot ${r.snapshot_name} was taken.`;
          }).catch(() => {});
        }}
      >
        <label for="vps-snapshot-name">Snapshot name</label>
        <input id="vps-snapshot-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit" disabled={!can.snapshot || !name.trim() || work !== null}>
          Take snapshot
        </button>
      </form>
      <WorkStatus {...job} />
      <QueryView query={snaps} what="snapshots">
        {(s) =>
          s.snapshots.length === 0 ? (
            <p class="empty">No snapshots. Stop the server and take one before a risky change.</p>
          ) : (
            <>
              <p>
                {s.total} of {s.max_snapshots} snapshots.
              </p>
              <ul class="item-list" aria-label="Snapshots">
                {s.snapshots.map((snap) => (
                  <li key={snap.name}>
                    <strong>{snap.name}</strong> {snap.description ? `— ${snap.description} ` : ''}
                    <span class="muted">
                      {new Date(snap.created_at).toLocaleString()}, {formatBytes(snap.size_bytes)}
                    </span>
                    <div class="actions">
                      {can.snapshot && (
                        <ConfirmDelete
                          action="Roll back to"
                          what="snapshot"
                          name={snap.name}
                          onConfirm={() =>
                            run(`Rolling back to ${snap.name}`, async () => {
                              const r = await must(
                                api.POST('/v1/vps/{vps_id}/snapshots/{snapshot_name}/rollback', {
                                  params: { path: { vps_id: id, snapshot_name: snap.name } },
                                }),
                              );
                              return r.message;
                            })
                          }
                        />
                      )}
                      <ConfirmDelete
                        what="snapshot"
                        name={snap.name}
                        onConfirm={() =>
                          run(`Deleting ${snap.name}`, async () => {
                            await must(
                              api.DELETE('/v1/vps/{vps_id}/snapshots/{snapshot_name}', {
                                params: { path: { vps_id: id, snapshot_name: snap.name } },
                              }),
                            );
                            return `Snapshot ${snap.name} was deleted.`;
                          })
                        }
                      />
                    </div>
                  </li>
                ))}
              </ul>
            </>
          )
        }
      </QueryView>
    </section>
  );
}

export function ServerBackups({ id, api, can }: { id: string; api: FjordClient; can: Allowed }) {
  const job = useServerWork(id);
  const { work, run } = job;
  const backups = useQuery({
    queryKey: ['server-detail', id, 'backups'],
    queryFn: () => must(api.GET('/v1/vps/{vps_id}/backups', { params: { path: { vps_id: id } } })),
    refetchInterval: (q) =>
      work !== null || q.state.data?.backups.some((b) => b.status === 'creating') ? 1000 : false,
  });
  const usage = useQuery({
    queryKey: ['server-detail', id, 'backup-usage'],
    queryFn: () => must(api.GET('/v1/vps/{vps_id}/backup-usage', { params: { path: { vps_id: id } } })),
  });
  const [name, setName] = useState('');
  const path = { params: { path: { vps_id: id } } };
  return (
    <section aria-labelledby="backups-heading">
      <h2 id="backups-heading">Backups</h2>
      <p>
        A backup is an archive of the whole disk kept apart from the server; restoring one needs the server
        stopped.
        {usage.data
          ? ` ${usage.data.backup_count} of ${usage.data.max_backups} backups, ${usage.data.used_gb} GB, about ${usage.data.estimated_monthly_cost} ${usage.data.currency} a month.`
          : ''}
      </p>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          run(`Backing up${name ? ` as ${name}` : ''}`, async () => {
            const b = await must(
              api.POST('/v1/vps/{vps_id}/backups', { ...path, body: name ? { name } : {} }),
            );
            setName('');
            return `Backup ${b.name} is ${b.status}.`;
          }).catch(() => {});
        }}
      >
        <label for="vps-backup-name">Backup name (optional)</label>
        <input id="vps-backup-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit" disabled={!can.backup || work !== null}>
          Back up now
        </button>
      </form>
      <WorkStatus {...job} />
      <QueryView query={backups} what="backups">
        {(b) =>
          b.backups.length === 0 ? (
            <p class="empty">No backups yet. Back up now, or set a backup policy through the API.</p>
          ) : (
            <ul class="item-list" aria-label="Backups">
              {b.backups.map((backup) => (
                <li key={backup.id}>
                  <strong>{backup.name}</strong> <span class="state">{backup.status}</span>{' '}
                  <span class="muted">
                    {backup.kind}, {new Date(backup.created_at).toLocaleString()},{' '}
                    {formatBytes(backup.size_bytes)}
                  </span>
                  {backup.error && <span class="error"> {backup.error}</span>}
                  <div class="actions">
                    {can.restore && backup.status === 'available' && (
                      <ConfirmDelete
                        action="Restore"
                        what="backup"
                        name={backup.name}
                        onConfirm={() =>
                          run(`Restoring ${backup.name}`, async () => {
                            const r = await must(
                              api.POST('/v1/vps/{vps_id}/backups/{backup_id}/restore', {
                                params: { path: { vps_id: id, backup_id: backup.id } },
                              }),
                            );
                            return r.message;
                          })
                        }
                      />
                    )}
                    {backup.status !== 'creating' && (
                      <ConfirmDelete
                        what="backup"
                        name={backup.name}
                        onConfirm={() =>
                          run(`Deleting ${backup.name}`, async () => {
                            await must(
                              api.DELETE('/v1/vps/{vps_id}/backups/{backup_id}', {
                                params: { path: { vps_id: id, backup_id: backup.id } },
                              }),
                            );
                            return `Backup ${backup.name} was deleted.`;
                          })
                        }
                      />
                    )}
                  </div>
                </li>
              ))}
            </ul>
          )
        }
      </QueryView>
    </section>
  );
}

function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return 'size not known yet';
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}
