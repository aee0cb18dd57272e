import type { Principal } from '../../../kernel/auth/principal.js';
import { pageOf } from '../../../kernel/http/pagination.js';
import { defineRoute } from '../../../kernel/http/route.js';
import type { RateLimitRow } from '../../../kernel/limits/table.js';
import type { DatabaseReports } from '../reports.js';
import { LIMITS } from '../rules.js';
import {
  BackupPolicy,
  BackupPolicyBody,
  DbParams,
  History,
  HistoryQuery,
  Metrics,
  Quota,
  RestoreBody,
  Restored,
  Snapshot,
  SnapshotBody,
  SnapshotDeleted,
  SnapshotFile,
  SnapshotList,
  SnapshotParams,
} from '../schemas.js';
import type { DatabasesService } from '../service.js';
import type { BackupPolicyService } from '../snapshots/backup-policy.js';
import type { SnapshotService } from '../snapshots/snapshot-service.js';
import { API_BUCKET, READ, TAG, WRITE } from './access.js';

/** The path-only operations of doc 1, designed in docs/databases.md. */
export function extraRoutes(
  dbs: DatabasesService,
  reports: DatabaseReports,
  snaps: SnapshotService,
  policies: BackupPolicyService,
  chargeCreation: (principal: Principal) => Promise<void>,
  limits: Record<string, RateLimitRow>,
) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/databases/:db_type/:db_name/metrics',
      operationId: 'getDatabaseMetrics',
      tag: TAG,
      summary: 'Connections, size, commits and rollbacks, cache hit ratio, from the server’s statistics',
      access: READ,
      rateLimit: [API_BUCKET],
      params: DbParams,
      response: { 200: Metrics },
      errors: [404, 502, 503],
      handler: async ({ principal, params }) =>
        reports.metrics(principal.customerId, params.db_type, params.db_name),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/quota',
      operationId: 'getDatabaseQuota',
      tag: TAG,
      summary: 'The account’s database quotas (plan) and limits, with what is used',
      access: READ,
      rateLimit: [API_BUCKET],
      response: { 200: Quota },
      handler: async ({ principal }) => {
        const { plan, quota, used } = await reports.quota(principal.customerId);
        return {
          plan,
          databases: { used, limit: quota.databases },
          database_size_mb: quota.sizeMb,
          snapshots_per_database: quota.snapshotsPerDatabase,
          connections_per_database: quota.connectionsPerDatabase,
          connection_limit_range: { min: LIMITS.connectionLimitMin, max: LIMITS.connectionLimitMax },
          firewall_rules_per_database: quota.firewallRules,
          rate_limits: {
            api_requests_per_minute: limits['database']?.points ?? 500,
            creations_per_hour: limits['database.create']?.points ?? 10,
            snapshots_per_hour: limits['database.snapshot']?.points ?? 20,
          },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/databases/history',
      operationId: 'listDatabaseHistory',
      tag: TAG,
      summary: 'Every database operation of the account, newest first (from the audit trail)',
      access: READ,
      rateLimit: [API_BUCKET],
      query: HistoryQuery,
      response: { 200: History },
      handler: async ({ principal, query }) => {
        const page = pageOf(query, 'per_page', 50);
        const { entries, total } = await reports.history(principal.customerId, {
          dbName: query.db_name,
          limit: page.limit,
          offset: page.offset,
        });
        return {
          history: entries.map((e) => ({
            id: e.id,
            action: e.action,
            db_name: e.resource_id,
            db_type: typeof e.details['db_type'] === 'string' ? (e.details['db_type'] as string) : null,
            actor_type: e.actor_type,
            actor_id: e.actor_id,
            details: e.details,
            created_at: e.created_at,
          })),
          total,
          page: page.page,
          per_page: page.size,
        };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/databases/:db_type/:db_name/snapshots',
      operationId: 'createDatabaseSnapshot',
      tag: TAG,
      summary: 'Take a snapshot now (a compressed logical dump); at most the plan’s count',
      access: WRITE,
      rateLimit: [API_BUCKET, 'database.snapshot'],
      params: DbParams,
      body: SnapshotBody,
      response: { 201: Snapshot },
      errors: [404, 409, 502, 503],
      handler: async ({ principal, params, body }) => {
        const row = await dbs.get(principal.customerId, params.db_type, params.db_name);
        return snaps.create(principal, row, { name: body?.name, description: body?.description });
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/databases/:db_type/:db_name/snapshots',
      operationId: 'listDatabaseSnapshots',
      tag: TAG,
      summary: 'List the snapshots, manual and automatic',
      access: READ,
      rateLimit: [API_BUCKET],
      params: DbParams,
      response: { 200: SnapshotList },
      errors: [404],
      handler: async ({ principal, params }) =>
        snaps.list(principal.customerId, params.db_type, params.db_name),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/databases/:db_type/:db_name/snapshots/:snapshot_id',
      operationId: 'deleteDatabaseSnapshot',
      tag: TAG,
      summary: 'Delete a snapshot, permanently',
      access: WRITE,
      rateLimit: [API_BUCKET],
      params: SnapshotParams,
      response: { 200: SnapshotDeleted },
      errors: [404],
      handler: async ({ principal, params }) => {
        await snaps.remove(principal, params.db_type, params.db_name, params.snapshot_id);
        return {
          ok: true,
          snapshot_id: params.snapshot_id,
          message: `Snapshot ${params.snapshot_id} deleted.`,
        };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/databases/:db_type/:db_name/snapshots/:snapshot_id/download',
      operationId: 'downloadDatabaseSnapshot',
      tag: TAG,
      summary: 'Download a snapshot as a gzip file of plain SQL (decrypted for the encrypted tier)',
      description:
        'Everything in the database, so it takes `database:write` like the password does. Load it with `gunzip -c file | psql` or `| mariadb`.',
      access: WRITE,
      rateLimit: [API_BUCKET],
      params: SnapshotParams,
      produces: 'application/gzip',
      response: { 200: SnapshotFile },
      errors: [404, 409],
      handler: async ({ principal, params, reply }) => {
        const file = await snaps.download(
          principal.customerId,
          params.db_type,
          params.db_name,
          params.snapshot_id,
        );
        reply.header('content-disposition', `attachment; filename="${file.filename}"`);
        return file.body;
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/databases/:db_type/:db_name/restore',
      operationId: 'restoreDatabase',
      tag: TAG,
      summary: 'Restore a snapshot into this database (replacing its contents) or into a new one',
      access: WRITE,
      rateLimit: [API_BUCKET],
      params: DbParams,
      body: RestoreBody,
      response: { 200: Restored },
      errors: [403, 404, 409, 429, 502, 503],
      handler: async ({ principal, params, body }) => {
        // A restore into a new database is a creation: it draws from the creation limit too.
        if (body.target_db_name) await chargeCreation(principal);
        return snaps.restore(
          principal,
          params.db_type,
          params.db_name,
          body.snapshot_id,
          body.target_db_name ?? null,
        );
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/databases/:db_type/:db_name/backup-policy',
      operationId: 'getDatabaseBackupPolicy',
      tag: TAG,
      summary: 'The automatic backup schedule and retention',
      access: READ,
      rateLimit: [API_BUCKET],
      params: DbParams,
      response: { 200: BackupPolicy },
      errors: [404],
      handler: async ({ principal, params }) =>
        policies.getPolicy(principal.customerId, params.db_type, params.db_name),
    }),
    defineRoute({
      method: 'PUT',
      url: '/v1/databases/:db_type/:db_name/backup-policy',
      operationId: 'putDatabaseBackupPolicy',
      tag: TAG,
      summary: 'Set the automatic backup schedule and retention',
      access: WRITE,
      rateLimit: [API_BUCKET],
      params: DbParams,
      body: BackupPolicyBody,
      response: { 200: BackupPolicy },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        policies.putPolicy(principal, params.db_type, params.db_name, body),
    }),
  ];
}
