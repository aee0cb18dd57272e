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
};
