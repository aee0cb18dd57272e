import { AppError } from '../../kernel/errors.js';

const field = (path: string, message: string) => ({ errors: [{ path, message }] });

export const appsErrors = {
  notFound: () => new AppError('not_found', 'app_not_found', 'No such app in this account.'),
  instanceNotFound: () =>
    new AppError(
      'not_found',
      'instance_not_found',
      'No such instance of this app runs now; GET /v1/apps/{app}/instances lists them.',
    ),
  badSince: () =>
    new AppError(
      'invalid',
      'invalid_since',
      'since is an RFC 3339 time (2026-11-26T10:00:00Z) or a duration back from now (90s, 5m, 2h).',
      field('/query/since', 'not a time or duration'),
    ),
  volumeFailed: (from: string, cause: unknown) =>
    new AppError(
      'unavailable',
      'volume_create_failed',
      `The container runtime could not create the volume${from ? ` ${from}` : ''}; nothing was kept. Try again; the operator's log has the runtime's reason.`,
      { cause },
    ),
  revisionNotFound: () => new AppError('not_found', 'revision_not_found', 'No such revision of this app.'),
  exists: (name: string) =>
    new AppError('conflict', 'app_exists', `This account already has an app named ${name}.`),
  badName: () =>
    new AppError(
      'invalid',
      'invalid_name',
      'An app name has 2-30 characters: a-z, 0-9 and inner hyphens, starting with a letter.',
      field('/body/name', 'not an app name'),
    ),
  unknownPlan: (code: string) =>
    new AppError(
      'invalid',
      'unknown_plan',
      `No plan ${code}; GET /v1/apps/plans lists them.`,
      field('/body/plan_code', 'unknown plan'),
    ),
  unknownRegion: (code: string) =>
    new AppError(
      'invalid',
      'unknown_region',
      `Region ${code} offers no container apps; GET /v1/regions lists the regions and their services.`,
      field('/body/region', 'unknown region'),
    ),
  badEnv: (path: string, message: string) =>
    new AppError('invalid', 'invalid_env', message, field(path, message)),
  badScaling: () =>
    new AppError(
      'invalid',
      'invalid_scaling',
      'min_instances may not be more than max_instances.',
      field('/body/min_instances', 'more than max_instances'),
    ),
  maxInstances: (max: number) =>
    new AppError(
      'invalid',
      'max_instances_exceeded',
      `This account's apps may run at most ${max} instances each.`,
      {
        ...field('/body/max_instances', `at most ${max}`),
        extra: { limit: max },
      },
    ),
  quota: (max: number) =>
    new AppError('forbidden', 'quota_exceeded', `This account may have at most ${max} apps.`, {
      extra: { limit: max },
    }),
  deployInProgress: (n: number) =>
    new AppError(
      'conflict',
      'deploy_in_progress',
      `Revision ${n} is still deploying; wait until it is ready or failed.`,
    ),
  revisionNotReady: (n: number, status: string) =>
    new AppError(
      'conflict',
      'revision_not_ready',
      `Revision ${n} is ${status}; only a ready revision can serve.`,
      {
        extra: { status },
      },
    ),
  alreadyServing: (n: number) =>
    new AppError('conflict', 'already_serving', `Revision ${n} already takes the traffic.`),
  invalidState: (action: string, status: string) =>
    new AppError('conflict', 'invalid_state', `Cannot ${action} an app that is ${status}.`, {
      extra: { status, action },
    }),
  quotaOf: (what: string, max: number) =>
    new AppError('forbidden', 'quota_exceeded', `This account may have at most ${max} ${what}.`, {
      extra: { limit: max },
    }),
  uploadNotFound: () =>
    new AppError('not_found', 'image_upload_not_found', 'No such image upload in this account.'),
  uploadTooLarge: (max: number) =>
    new AppError('invalid', 'image_too_large', `An image archive may have at most ${max} bytes.`, {
      ...field('/body/size_bytes', `at most ${max}`),
      extra: { limit: max },
    }),
  notUploaded: (id: string, expired: boolean) =>
    new AppError(
      'conflict',
      'image_not_uploaded',
      expired
        ? `Image upload ${id} expired before its archive was uploaded; create another upload.`
        : `Image upload ${id} has no archive yet: PUT the archive to its upload_url first.`,
      { extra: { upload_id: id } },
    ),
  badArchive: (id: string) =>
    new AppError(
      'invalid',
      'invalid_image_archive',
      `Image upload ${id} is not a tar archive (docker-archive or oci-archive, as written by podman save or docker save), plain or gzipped.`,
      field('/body/image/upload_id', 'not an image archive'),
    ),
  badImageReference: (image: string, why: string) =>
    new AppError(
      'invalid',
      'invalid_image_reference',
      `${JSON.stringify(image.slice(0, 100))} is not an image reference: ${why}. Name one as registry/path:tag (ghcr.io/team/web:1.4), or an upload as {"upload_id": …}.`,
      field('/body/image', 'not an image reference'),
    ),
  registryNotAllowed: (registry: string, allowed: string[]) =>
    new AppError(
      'invalid',
      'image_registry_not_allowed',
      allowed.length
        ? `Images come from ${allowed.join(', ')} on this platform, or from your uploads (POST /v1/apps/image-uploads); ${registry} is not one of them.`
        : `This platform runs uploaded images only (POST /v1/apps/image-uploads); ${registry} is not a registry it pulls from.`,
      { ...field('/body/image', 'registry not allowed'), extra: { registry, allowed_registries: allowed } },
    ),
  registryPrivate: (registry: string) =>
    new AppError(
      'invalid',
      'image_registry_private',
      `${registry} is a loopback, link-local or private address; images are not pulled from there on this platform.`,
      { ...field('/body/image', 'private registry address'), extra: { registry } },
    ),
  imageInUse: (id: string, n: number) =>
    new AppError(
      'conflict',
      'image_in_use',
      `Image upload ${id} is the image of ${n} revision${n === 1 ? '' : 's'}; delete those apps first.`,
      { extra: { revisions: n } },
    ),
  badVolumeName: () =>
    new AppError(
      'invalid',
      'invalid_name',
      'A volume name has 2-30 characters: a-z, 0-9 and inner hyphens, starting with a letter.',
      field('/body/name', 'not a volume name'),
    ),
  volumeNotFound: () => new AppError('not_found', 'volume_not_found', 'No such volume of this app.'),
  snapshotNotFound: () => new AppError('not_found', 'snapshot_not_found', 'No such volume snapshot.'),
  volumeExists: (name: string) =>
    new AppError('conflict', 'volume_exists', `This app already has a volume named ${name}.`),
  volumeTooLarge: (max: number) =>
    new AppError('invalid', 'volume_too_large', `A volume may have at most ${max} GB on this plan.`, {
      ...field('/body/size_gb', `at most ${max}`),
      extra: { limit: max },
    }),
  badMountPath: (message: string) =>
    new AppError('invalid', 'invalid_mount_path', message, field('/body/mount_path', message)),
  snapshotNotReady: (status: string) =>
    new AppError(
      'conflict',
      'snapshot_not_ready',
      `This snapshot is ${status}; only a ready one can be restored.`,
      {
        extra: { status },
      },
    ),
  badHostName: (host: string) =>
    new AppError(
      'invalid',
      'invalid_host_name',
      `${host} is not a host name you can add: a DNS name like www.example.com, outside the apps domain.`,
      field('/body/host_name', 'not a custom host name'),
    ),
  domainTaken: (host: string) =>
    new AppError('conflict', 'domain_exists', `${host} is already a custom domain of an app.`),
  domainNotFound: () => new AppError('not_found', 'domain_not_found', 'No such custom domain of this app.'),
};
