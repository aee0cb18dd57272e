import { AppError } from '../../kernel/errors.js';

/** Cluster errors: the codes Kubernetes clients of Fjord see, with the statuses docs/clusters.md lists. */
export const clusterErrors = {
  notFound: (what = 'Cluster') => new AppError('not_found', 'not_found', `${what} not found.`),
  notReady: (status: string, op: string) =>
    new AppError('conflict', 'not_ready', `The cluster is ${status}; ${op} needs it running.`),
  nameTaken: (name: string) =>
    new AppError('conflict', 'name_taken', `A cluster named ${name} already exists in this account.`),
  invalidPlan: (code: string, kind: string) =>
    new AppError('invalid', 'invalid_plan', `No ${kind} plan ${code}; GET /v1/kubernetes/plans lists them.`),
  invalid: (message: string, path: string) =>
    new AppError('invalid', 'invalid_request', message, { errors: [{ path, message }] }),
  regionUnavailable: (code: string) =>
    new AppError('invalid', 'region_unavailable', `Region ${code} does not offer managed clusters.`),
  quota: (plan: string, max: number) =>
    new AppError('forbidden', 'quota_exceeded', `The ${plan} plan allows ${max} clusters.`),
  ipLimit: (max: number) =>
    new AppError('forbidden', 'quota_exceeded', `A cluster holds at most ${max} floating IPv4 addresses.`),
  ptrNotConfirmed: (name: string, address: string, why: string) =>
    new AppError(
      'invalid',
      'ptr_not_forward_confirmed',
      `${name} does not resolve to ${address} (${why}); add an A record for it first.`,
      { errors: [{ path: '/body/ptr_record', message: why }] },
    ),
  capacity: (message: string) => new AppError('unavailable', 'capacity', message),
  backend: (message: string) => new AppError('bad_gateway', 'backend_error', message),
  backupNotReady: (status: string) =>
    new AppError('conflict', 'not_ready', `The backup is ${status}; only Completed backups can be restored.`),
  restoreRunning: (name: string) =>
    new AppError('conflict', 'not_ready', `Restore ${name} is still running; one restore runs at a time.`),
};
