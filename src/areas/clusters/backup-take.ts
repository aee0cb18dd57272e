import { newId } from '../../kernel/ids.js';
import type { ClusterDriver } from './drivers/driver.js';
import type { K8sBackupsTable, K8sClustersTable } from './migrations.js';
import type { ClusterRepo } from './repo.js';

export const DAY_MS = 86_400_000;
/** A cluster's policy until it is changed: off, daily at 03:00 local time, a week kept. */
export const DEFAULT_POLICY = {
  enabled: false,
  schedule_cron: '0 3 * * *',
  retention_days: 7,
  include_volumes: true,
  namespaces: null as string[] | null,
};
/** `scheduled` by the policy, `manual` through the API, `pre-upgrade` before an upgrade. */
export type BackupKind = 'scheduled' | 'manual' | 'pre-upgrade';

export const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14);

/**
 * Starts a backup through the driver and records it: named `<cluster>-<kind>-<UTC stamp>` (`-2`,
 * `-3` … when taken in the same second), kept `retention_days` after it completes.
 */
export async function takeBackup(
  repo: ClusterRepo,
  driver: ClusterDriver,
  row: K8sClustersTable,
  kind: BackupKind,
  at: number,
  namespaces: string[] | null,
  policy: { retention_days: number; include_volumes: boolean },
  names: Set<string>,
): Promise<K8sBackupsTable> {
  const { seconds, itemsCount } = await driver.startBackup({
    clusterId: row.id,
    namespaces,
    includeVolumes: policy.include_volumes,
  });
  let name = `${row.name}-${kind}-${stamp(at)}`;
  for (let i = 2; names.has(name); i++) name = `${row.name}-${kind}-${stamp(at)}-${i}`;
  names.add(name);
  const completed = at + seconds * 1000;
  const backup: K8sBackupsTable = {
    id: newId(),
    cluster_id: row.id,
    kind,
    name,
    namespaces: namespaces === null ? null : JSON.stringify(namespaces),
    include_volumes: policy.include_volumes ? 1 : 0,
    started_at: at,
    completed_at: completed,
    expires_at: completed + policy.retention_days * DAY_MS,
    items_count: itemsCount,
    error: null,
  };
  await repo.insertBackup(backup);
  return backup;
}
