import { AppError } from '../../kernel/errors.js';

/**
 * The area's error catalogue. The check errors of the spec's table other than
 * `session_not_found` are answers (200 with `error`), not AppErrors; see service.check.
 */
export const verifyErrors = {
  sessionNotFound: (why = 'No verification session with this id.') =>
    new AppError('not_found', 'session_not_found', why),
  notCancellable: (status: string) =>
    new AppError(
      'conflict',
      'session_not_cancellable',
      `Only a pending or delivered session can be cancelled; this one is ${status}.`,
    ),
  invalidRecipient: (message: string) =>
    new AppError('invalid', 'invalid_recipient', message, { errors: [{ path: '/body/recipient', message }] }),
  metadataTooLarge: (max: number) =>
    new AppError('invalid', 'metadata_too_large', `metadata may hold at most ${max} bytes of JSON.`, {
      errors: [{ path: '/body/metadata', message: `at most ${max} bytes of JSON` }],
    }),
  unsupportedLocale: (locale: string) =>
    new AppError('invalid', 'unsupported_locale', `Voice calls are not read in locale ${locale}.`, {
      errors: [{ path: '/body/locale', message: 'voice supports en, no, sv, da, fi' }],
    }),
  senderProfileRequired: () =>
    new AppError(
      'bad_request',
      'sender_profile_required',
      'The sms channel needs a sender profile on the account: create one under /v1/sms/sender-profiles.',
    ),
  smsUnavailable: () =>
    new AppError('unavailable', 'sms_unavailable', 'The SMS service is not available in this deployment.'),
  deliveryFailed: (channel: string, cause: unknown) =>
    new AppError('bad_gateway', 'delivery_failed', `The ${channel} could not be handed over for delivery.`, {
      cause,
    }),
  pumpingGuard: (what: string, outcome: { retryAfter: number; limit: number; window: number }) =>
    new AppError(
      'rate_limited',
      'RATE_LIMIT_EXCEEDED',
      `Too many verification sessions to ${what}: at most ${outcome.limit} per ${outcome.window}s.`,
      { extra: { retry_after: outcome.retryAfter, limit: outcome.limit, window: `${outcome.window}s` } },
    ),
};
