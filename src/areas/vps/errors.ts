import { AppError } from '../../kernel/errors.js';

export const vpsErrors = {
  notFound: () => new AppError('not_found', 'vps_not_found', 'No such virtual server.'),
  unknownPlan: (code: string) =>
    new AppError('invalid', 'unknown_plan', `No plan ${code}; GET /v1/vps/plans lists them.`, {
      errors: [{ path: '/body/plan_code', message: 'unknown plan' }],
    }),
  unknownTemplate: (id: string) =>
    new AppError(
      'invalid',
      'unknown_os_template',
      `No OS template ${id}; GET /v1/vps/os-templates lists them.`,
      {
        errors: [{ path: '/body/os_template', message: 'unknown OS template' }],
      },
    ),
  templateUnavailable: (id: string) =>
    new AppError('invalid', 'os_template_unavailable', `OS template ${id} cannot run on this install.`, {
      errors: [{ path: '/body/os_template', message: 'unavailable on this install' }],
    }),
  unknownRegion: (code: string) =>
    new AppError(
      'invalid',
      'unknown_region',
      `Region ${code} offers no virtual servers; GET /v1/vps/regions lists them.`,
      {
        errors: [{ path: '/body/region', message: 'unknown region' }],
      },
    ),
  badHostname: () =>
    new AppError(
      'invalid',
      'invalid_hostname',
      'hostname must be a host name: labels of a-z, 0-9 and inner hyphens, 1-63 characters each, at most 253 in all.',
      { errors: [{ path: '/body/hostname', message: 'not a host name' }] },
    ),
  quota: (what: string, max: number) =>
    new AppError('forbidden', 'quota_exceeded', `This account may have at most ${max} ${what}.`, {
      extra: { limit: max },
    }),
  /** A move the server's state does not allow; nothing changed. */
  invalidState: (action: string, status: string, allowed: string[]) =>
    new AppError(
      'conflict',
      'invalid_state',
      `Cannot ${action} a server that is ${status}; ${action} needs it ${allowed.join(' or ')}.`,
      { extra: { status, action } },
    ),
  badSnapshotName: () =>
    new AppError(
      'invalid',
      'invalid_snapshot_name',
      'A snapshot name needs at least one letter, digit or underscore (other characters become underscores).',
      { errors: [{ path: '/body/name', message: 'empty after sanitising' }] },
    ),
  snapshotExists: (name: string) =>
    new AppError('conflict', 'snapshot_exists', `This server already has a snapshot named ${name}.`),
  snapshotLimit: (max: number) =>
    new AppError('conflict', 'snapshot_limit', `A server keeps at most ${max} snapshots; delete one first.`, {
      extra: { limit: max },
    }),
  snapshotNotFound: () => new AppError('not_found', 'snapshot_not_found', 'No such snapshot on this server.'),
  backupNotFound: () => new AppError('not_found', 'backup_not_found', 'No such backup of this server.'),
  backupLimit: (max: number) =>
    new AppError(
      'conflict',
      'backup_limit',
      `A server keeps at most ${max} manual backups; delete one first (automatic backups are pruned by the policy).`,
      { extra: { limit: max } },
    ),
  backupInProgress: () =>
    new AppError(
      'conflict',
      'backup_in_progress',
      'A backup of this server is being taken; try again when it is done.',
    ),
  restoreInProgress: (status: string) =>
    new AppError(
      'conflict',
      'restore_in_progress',
      'A backup is being restored onto this server; try again when it is done.',
      { extra: { status } },
    ),
  backupNotAvailable: (status: string) =>
    new AppError('conflict', 'backup_not_available', `This backup is ${status}, not available.`, {
      extra: { backup_status: status },
    }),
  backupUnreadable: (cause: unknown) =>
    new AppError(
      'bad_gateway',
      'backup_unreadable',
      'The backup archive could not be read back from object storage intact; the server was not changed.',
      { cause },
    ),
  backupFailed: (cause: unknown) =>
    new AppError('bad_gateway', 'backup_failed', 'Taking the backup failed; nothing was kept.', { cause }),
  retentionTooHigh: (max: number) =>
    new AppError('invalid', 'retention_too_high', `retention_count may be at most ${max}.`, {
      errors: [{ path: '/body/retention_count', message: `at most ${max}` }],
      extra: { limit: max },
    }),
  badDownloadLink: () =>
    new AppError('not_found', 'download_link_invalid', 'This download link is unknown or has expired.'),
  terminalUnavailable: () =>
    new AppError(
      'unavailable',
      'terminal_unavailable',
      'The web terminal is available only where servers really run: this install simulates them (FJORD_VPS_DRIVER=simulated), so there is no server to log in to.',
    ),
};
