import { AppError, kernelErrors } from '../../kernel/errors.js';

const invalid = (code: string, path: string, message: string) =>
  new AppError('invalid', code, message, { errors: [{ path, message }] });

/** The SMS and SMS-keyword error catalogue (docs/sms.md lists every code). */
export const smsErrors = {
  messageNotFound: () => kernelErrors.notFound('SMS message'),
  profileNotFound: () => kernelErrors.notFound('Sender profile'),
  keywordNotFound: () => kernelErrors.notFound('Keyword'),
  noRecipients: () =>
    invalid('no_recipients', '/body', 'Give at least one recipient in `to`, `to_contacts` or `to_groups`.'),
  contactsWithoutNumber: () =>
    invalid('no_recipients', '/body', 'None of the contacts or group members has a phone number.'),
  invalidNumber: (path: string, value: string) =>
    invalid('invalid_phone_number', path, `${JSON.stringify(value)} is not a valid E.164 phone number.`),
  tooManyParts: (parts: number) =>
    invalid(
      'message_too_long',
      '/body/message',
      `The message needs ${parts} SMS parts; at most 10 are allowed.`,
    ),
  emptyMessage: () => invalid('empty_message', '/body/message', 'The message is empty.'),
  callbackNotHttps: () =>
    invalid('invalid_callback_url', '/body/callback_url', '`callback_url` must be an absolute https:// URL.'),
  badWebhookUrl: () =>
    invalid('invalid_webhook_url', '/body/webhook_url', '`webhook_url` must be an absolute http(s) URL.'),
  badTimeZone: (tz: string) =>
    invalid('invalid_timezone', '/body/timezone', `${JSON.stringify(tz)} is not an IANA time zone.`),
  badScheduledAt: () =>
    invalid('invalid_scheduled_at', '/body/scheduled_at', '`scheduled_at` must be an ISO 8601 date-time.'),
  scheduledInPast: () =>
    invalid('scheduled_at_in_past', '/body/scheduled_at', '`scheduled_at` must be in the future.'),
  scheduledTooFar: () =>
    invalid('scheduled_at_too_far', '/body/scheduled_at', '`scheduled_at` may be at most 30 days ahead.'),
  noSenderProfile: () =>
    new AppError(
      'conflict',
      'no_sender_profile',
      'The account has no sender profile: create one with POST /v1/sms/sender-profiles.',
    ),
  senderNotApproved: (status: string) =>
    new AppError(
      'conflict',
      'sender_not_approved',
      `The sender profile is ${status}: a custom sender id can be used once an operator approves it.`,
    ),
  cannotCancel: (status: string) =>
    new AppError('conflict', 'cannot_cancel', `A ${status} message cannot be cancelled.`, {
      extra: { status },
    }),
  badSenderId: (message: string) => invalid('invalid_sender_id', '/body/sender_id', message),
  brandConfirmationRequired: () =>
    invalid(
      'brand_confirmation_required',
      '/body/brand_confirmation',
      'A custom alphanumeric sender id needs `brand_confirmation: true` (you confirm the brand is yours).',
    ),
  onlyDefaultProfile: () =>
    new AppError(
      'conflict',
      'cannot_delete_only_default',
      'The default sender profile cannot be deleted while it is the only one.',
    ),
  badPeriod: () => invalid('invalid_period', '/query/period', '`period` must be a month as YYYY-MM.'),
  badKeyword: (path: string) =>
    invalid('invalid_keyword', path, 'A keyword is 2 to 20 letters A-Z and digits 0-9.'),
  keywordTaken: () =>
    new AppError(
      'conflict',
      'keyword_unavailable',
      'This keyword is reserved or taken on the shared number.',
    ),
  profileNotPending: (status: string) =>
    new AppError('conflict', 'not_pending', `The sender profile is ${status}, not pending.`),
};
