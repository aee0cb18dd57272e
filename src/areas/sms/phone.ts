import { lazyPackage } from '../../kernel/lazy.js';

/** Number metadata is loaded with the first number, not at start. */
const libphonenumber = lazyPackage<typeof import('libphonenumber-js')>('libphonenumber-js');

/** E.164 form of a number, or null when it is not a valid phone number written with `+`. */
export function toE164(value: string): string | null {
  const trimmed = value.trim();
  if (!trimmed.startsWith('+')) return null;
  const parsed = libphonenumber().parsePhoneNumberFromString(trimmed);
  return parsed?.isValid() ? parsed.number : null;
}

/** Keeps the country calling code and hides the rest: `+4791234567` → `+47********`. */
export function maskNumber(phone: string): string {
  const parsed = libphonenumber().parsePhoneNumberFromString(phone);
  const cc = parsed ? `+${parsed.countryCallingCode}` : phone.slice(0, 3);
  return cc + '*'.repeat(Math.max(4, phone.length - cc.length));
}
