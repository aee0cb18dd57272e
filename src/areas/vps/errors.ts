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
};
