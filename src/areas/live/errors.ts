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
};
