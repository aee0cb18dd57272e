import { lazyPackage } from '../../kernel/lazy.js';

/** The full number metadata is loaded with the first number, not at start. */
const libphonenumber = lazyPackage<typeof import('libphonenumber-js/max')>('libphonenumber-js/max');

/**
 * Reads a phone number written in international form ("+47 912 34 567", "+4791234567") and
 * answers its E.164 form, or null when it is not a valid number of any country. The full ("max")
 * metadata is used so that validity is checked against each country's number plan, not only
 * its lengths. Numbers without a leading "+" are refused: there is no country to assume.
 */
export function toE164(input: string): string | null {
  const text = input.trim();
  if (!text.startsWith('+')) return null;
  // Only digits and the usual separators; libphonenumber would otherwise skip letters ("+47 CALL").
  if (!/^\+[0-9 ().-]+$/.test(text)) return null;
  const parsed = libphonenumber().parsePhoneNumberFromString(text);
  if (!parsed?.isValid()) return null;
  return parsed.number;
}
