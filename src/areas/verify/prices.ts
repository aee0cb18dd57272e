/**
 * Verification is billed per session plus delivery (doc 3, Billing): the SMS pipeline prices its
 * own units; a call is priced per started minute; e-mail is included. The session fee and the
 * minute price are not stated: ours, in minor units (øre, cents) per currency.
 */
export const SESSION_FEE_MINOR: Record<string, number> = { NOK: 50, SEK: 50, DKK: 40, EUR: 5, USD: 5 };
export const VOICE_MINUTE_MINOR: Record<string, number> = { NOK: 150, SEK: 150, DKK: 120, EUR: 15, USD: 15 };
export const DEFAULT_CURRENCY = 'NOK';

export const sessionFee = (currency: string) => SESSION_FEE_MINOR[currency] ?? SESSION_FEE_MINOR['NOK']!;
export const voiceMinutes = (seconds: number) => Math.max(1, Math.ceil(seconds / 60));
export const voiceCost = (currency: string, seconds: number) =>
  voiceMinutes(seconds) * (VOICE_MINUTE_MINOR[currency] ?? VOICE_MINUTE_MINOR['NOK']!);
/** The SMS pipeline answers in major units (0.99); charges are kept in minor units. */
export const toMinor = (amount: number) => Math.round(amount * 100);
