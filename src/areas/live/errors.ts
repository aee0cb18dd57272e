import { AppError } from '../../kernel/errors.js';

export const liveErrors = {
  eventNotFound: (id?: string) =>
    new AppError(
      'not_found',
      'event_not_found',
      id ? `Live event ${id} not found.` : 'Live event not found.',
    ),
  /** A lifecycle move the event's status does not allow: nothing changes. */
  wrongState: (action: string, status: string, allowed: readonly string[]) =>
    new AppError(
      'conflict',
      `event_${status}`,
      `Cannot ${action} while the event is ${status}; allowed in: ${allowed.join(', ')}.`,
    ),
  slugTaken: (slug: string) =>
    new AppError('conflict', 'slug_taken', `An event with slug ${JSON.stringify(slug)} already exists.`),
  passwordRequired: () => {
    const message = 'A password is required when visibility_mode is password.';
    return new AppError('invalid', 'password_required', message, {
      errors: [{ path: '/body/password', message }],
    });
  },
  bitrateTooHigh: (max: number) => {
    const message = `max_bitrate_kbps is at most ${max} on this plan.`;
    return new AppError('invalid', 'bitrate_above_plan', message, {
      errors: [{ path: '/body/max_bitrate_kbps', message }],
    });
  },
  rehearsalDisabled: () =>
    new AppError(
      'conflict',
      'rehearsal_disabled',
      'Rehearsals are off for this event (rehearsal_enabled is false).',
    ),
  quota: (max: number, plan: string) =>
    new AppError('forbidden', 'quota_exceeded', `The ${plan} plan allows ${max} live events.`),
  invalid: (path: string, what: string) => {
    const message = `${path.split('/').pop()} ${what}.`;
    return new AppError('invalid', 'invalid_field', message, { errors: [{ path, message }] });
  },
  tokenQuota: (max: number) =>
    new AppError('forbidden', 'quota_exceeded', `An event has at most ${max} watch tokens.`),
  /** Too many failed password or token attempts from one viewer address on one event. */
  tooManyAttempts: (limit: number, windowSeconds: number, retryAfter: number) =>
    new AppError(
      'rate_limited',
      'too_many_attempts',
      `At most ${limit} failed attempts in ${windowSeconds / 60} minutes; try again in ${retryAfter} s.`,
      { extra: { retry_after: retryAfter, limit, window: `${windowSeconds}s` } },
    ),
  accessMode: (mode: string, wanted: string) =>
    new AppError(
      'conflict',
      `visibility_${mode}`,
      `This event's visibility_mode is ${mode}; verify-${wanted} applies to ${wanted} events only.`,
    ),
  grantNotFound: () => new AppError('not_found', 'grant_not_found', 'No such access grant for this event.'),
  grantExpired: () =>
    new AppError('forbidden', 'grant_expired', 'The access grant has expired; verify again.'),
  tokenUnusable: (status: string) =>
    new AppError(
      'forbidden',
      `token_${status}`,
      `The watch token is ${status}; this grant can no longer start playback.`,
    ),
  tenantOnly: () =>
    new AppError(
      'forbidden',
      'tenant_access_required',
      "This event is shown only to its own account: send a personal access token or Fjord login of the event's customer as `Authorization: Bearer`.",
    ),
  recordingNotFound: () => new AppError('not_found', 'recording_not_found', 'Recording not found.'),
};
