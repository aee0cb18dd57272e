import { AppError } from '../../kernel/errors.js';

export const gpuErrors = {
  unknownEngine: (engine: string) =>
    new AppError('invalid', 'unknown_engine', `No engine ${engine}; GET /v1/gpu/engines lists them.`),
  wrongType: (engine: string, type: string) =>
    new AppError('invalid', 'engine_type_mismatch', `Engine ${engine} makes ${type} jobs.`),
  unknownPreset: (preset: string, type: string) =>
    new AppError('invalid', 'unknown_preset', `No ${type} preset ${preset}; GET /v1/gpu/presets lists them.`),
  tier: (engine: string, tier: string, plan: string) =>
    new AppError(
      'forbidden',
      'tier_required',
      `Engine ${engine} needs the ${tier} plan or above (this account is on ${plan}).`,
    ),
  inputs: (message: string, path: string) =>
    new AppError('invalid', 'invalid_inputs', message, { errors: [{ path, message }] }),
  webhookVideoOnly: () =>
    new AppError('invalid', 'webhook_video_only', 'webhook_url is for video jobs only.', {
      errors: [{ path: '/body/webhook_url', message: 'only for video jobs' }],
    }),
  concurrent: (max: number) =>
    new AppError(
      'rate_limited',
      'concurrent_job_limit',
      `This key already has ${max} queued or processing jobs.`,
      {
        extra: { retry_after: 10, limit: max, window: 'concurrent' },
      },
    ),
  notFound: () => new AppError('not_found', 'job_not_found', 'No such GPU job.'),
  notCancellable: (status: string) =>
    new AppError(
      'conflict',
      'job_not_cancellable',
      `The job is ${status}; only queued or processing jobs can be cancelled.`,
    ),
  engineNotIssued: (engines: string[]) =>
    new AppError(
      'forbidden',
      'engine_not_issued',
      `This worker token was not issued for ${engines.join(', ')}; a worker may narrow its engines, never add to them. Ask the operator for a token that lists ${engines.length === 1 ? 'it' : 'them'}.`,
      { extra: { engines } },
    ),
  notLeased: () =>
    new AppError(
      'conflict',
      'job_not_leased',
      'This worker does not hold the job (its lease ended, or it was cancelled).',
    ),
  badOutputName: () =>
    new AppError(
      'invalid',
      'invalid_output_name',
      'Output names are 1-64 of a-z, 0-9, ., _ and - with an extension.',
    ),
  linkExpired: () =>
    new AppError('not_found', 'output_link_expired', 'This download link is unknown or has expired.'),
  outputTooLarge: (type: string, max: number) =>
    new AppError(
      'payload_too_large',
      'output_too_large',
      `Outputs of ${type} jobs are at most ${max / 2 ** 20} MB.`,
    ),
  uploadLinkInvalid: () =>
    new AppError('forbidden', 'upload_link_invalid', 'This upload address is unknown or has expired.'),
  uploadSize: (size: number) =>
    new AppError(
      'invalid',
      'upload_size_mismatch',
      `This upload address takes a body of exactly ${size} bytes, as stated when it was made.`,
    ),
  imageTooLarge: (w: number, h: number, max: number) =>
    new AppError(
      'invalid',
      'image_too_large',
      `The image is ${w}×${h}; image outputs are at most ${max} pixels on each side.`,
    ),
};
