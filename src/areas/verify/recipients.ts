import { lazyPackage } from '../../kernel/lazy.js';
import { verifyErrors } from './errors.js';
import type { Channel } from './migrations.js';

/** The full number metadata is loaded with the first number, not at start. */
const libphonenumber = lazyPackage<typeof import('libphonenumber-js/max')>('libphonenumber-js/max');

/** Digits of the number range the pumping guard counts together: country code and the next digits. */
export const PREFIX_DIGITS = 6;

/** The recipient in canonical form: E.164 for phone channels, the address with a lower-case domain for e-mail. */
export function normaliseRecipient(channel: Channel, raw: string): string {
  const value = raw.trim();
  if (channel === 'email') {
    const at = value.lastIndexOf('@');
    const local = value.slice(0, at);
    const domain = value.slice(at + 1).toLowerCase();
    const ok =
      at > 0 &&
      local.length <= 64 &&
      /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+$/.test(local) &&
      !local.startsWith('.') &&
      !local.endsWith('.') &&
      !local.includes('..') &&
      /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(domain);
    if (!ok) throw verifyErrors.invalidRecipient('recipient must be an e-mail address for the email channel');
    return `${local}@${domain}`;
  }
  if (!/^\+[1-9]\d{6,14}$/.test(value)) {
    throw verifyErrors.invalidRecipient(
      `recipient must be an E.164 number (+ and 7-15 digits) for ${channel}`,
    );
  }
  const phone = libphonenumber().parsePhoneNumberFromString(value);
  if (!phone?.isValid()) {
    throw verifyErrors.invalidRecipient(`recipient ${value} is not a valid phone number`);
  }
  return phone.number;
}

export const phonePrefix = (e164: string) => e164.slice(0, 1 + PREFIX_DIGITS);
