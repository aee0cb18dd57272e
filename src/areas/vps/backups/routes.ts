import { Type } from '@sinclair/typebox';
import { publicAccess } from '../../../kernel/auth/principal.js';
import { defineRoute } from '../../../kernel/http/route.js';
import { read, TAG, write } from '../access.js';
import { ServerParams } from '../schemas.js';
import type { BackupService } from './backup-service.js';
import type { BackupDownloads } from './downloads.js';
import type { BackupPolicyService } from './policy.js';
import {
  BackupBody,
  BackupDeleted,
  BackupList,
  BackupParams,
  BackupView,
  DownloadLinkView,
  DownloadParams,
  DownloadQuery,
  PolicyBody,
  PolicyView,
  Restored,
  UsageQuery,
  UsageView,
} from './schemas.js';

export function backupRoutes(
  backups: BackupService,
  downloads: BackupDownloads,
  policies: BackupPolicyService,
) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/vps/:vps_id/backups',
      operationId: 'vpsBackups',
      tag: TAG,
      summary: 'The server’s backups, newest first',
      access: read,
      rateLimit: ['vps'],
      params: ServerParams,
      response: { 200: BackupList },
      errors: [404],
      handler: async ({ principal, params }) => backups.list(principal.customerId, params.vps_id),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/vps/:vps_id/backups',
      operationId: 'vpsCreateBackup',
      tag: TAG,
      summary: 'Back the server up now (running or stopped); answers once the archive is stored',
      access: write,
      rateLimit: ['vps'],
      params: ServerParams,
      body: Type.Optional(BackupBody),
      response: { 201: BackupView },
      errors: [404, 409, 502],
      handler: async ({ principal, params, body }) =>
        backups.create(principal.customerId, params.vps_id, body ?? {}),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/vps/:vps_id/backups/:backup_id',
      operationId: 'vpsDeleteBackup',
      tag: TAG,
      summary: 'Delete a backup for good',
      access: write,
      rateLimit: ['vps'],
      params: BackupParams,
      response: { 200: BackupDeleted },
      errors: [404, 409],
      handler: async ({ principal, params }) =>
        backups.remove(principal.customerId, params.vps_id, params.backup_id),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/vps/:vps_id/backups/:backup_id/restore',
      operationId: 'vpsRestoreBackup',
      tag: TAG,
      summary: 'Put a stopped server’s disk back as it was at the backup',
      access: write,
      rateLimit: ['vps'],
      params: BackupParams,
      response: { 200: Restored },
      errors: [404, 409, 502],
      handler: async ({ principal, params }) =>
        backups.restore(principal.customerId, params.vps_id, params.backup_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/vps/:vps_id/backups/:backup_id/download',
      operationId: 'vpsDownloadBackup',
      tag: TAG,
      summary: 'A signed link to the backup’s tar.gz archive, valid one hour',
      description:
        'The archive holds the whole disk (keys included), so the link takes `vps:write`. GET `download_url` without credentials until `expires_at`.',
      access: write,
      rateLimit: ['vps'],
      params: BackupParams,
      response: { 200: DownloadLinkView },
      errors: [404, 409],
      handler: async ({ principal, params }) =>
        downloads.link(principal.customerId, params.vps_id, params.backup_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/vps/backup-downloads/:backup_id',
      operationId: 'vpsBackupFile',
      tag: TAG,
      summary: 'The backup archive behind a download link (the link is the credential)',
      access: publicAccess,
      params: DownloadParams,
      query: DownloadQuery,
      produces: 'application/gzip',
      response: { 200: Type.String({ description: 'The tar.gz archive' }) },
      errors: [404, 502],
      handler: async ({ params, query, reply }) => {
        const file = await downloads.open(params.backup_id, query.token);
        // Streamed: a real server's archive is hundreds of megabytes.
        return reply
          .header('content-disposition', `attachment; filename="${file.filename}"`)
          .header('content-length', String(file.size))
          .header('cache-control', 'private, no-store')
          .type('application/gzip')
          .send(file.body);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/vps/:vps_id/backup-policy',
      operationId: 'vpsBackupPolicy',
      tag: TAG,
      summary: 'The automatic backup schedule and retention (disabled until set)',
      access: read,
      rateLimit: ['vps'],
      params: ServerParams,
      response: { 200: PolicyView },
      errors: [404],
      handler: async ({ principal, params }) => policies.get(principal.customerId, params.vps_id),
    }),
    defineRoute({
      method: 'PUT',
      url: '/v1/vps/:vps_id/backup-policy',
      operationId: 'vpsPutBackupPolicy',
      tag: TAG,
      summary: 'Set the automatic backup schedule (daily or weekly, at an hour UTC) and retention',
      access: write,
      rateLimit: ['vps'],
      params: ServerParams,
      body: PolicyBody,
      response: { 200: PolicyView },
      errors: [404],
      handler: async ({ principal, params, body }) => policies.put(principal.customerId, params.vps_id, body),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/vps/:vps_id/backup-usage',
      operationId: 'vpsBackupUsage',
      tag: TAG,
      summary: 'Bytes the server’s backups take in object storage and their monthly price',
      access: read,
      rateLimit: ['vps'],
      params: ServerParams,
      query: UsageQuery,
      response: { 200: UsageView },
      errors: [404],
      handler: async ({ principal, params, query }) =>
        backups.usage(principal.customerId, params.vps_id, query.currency),
    }),
  ];
}
