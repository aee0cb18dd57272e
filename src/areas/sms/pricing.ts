/** Price of one SMS unit by currency (document 3, billing constants). */
export const PRICE_PER_UNIT: Record<string, number> = { NOK: 0.99, SEK: 0.99, DKK: 0.79, EUR: 0.1, USD: 0.1 };
export const CURRENCIES = Object.keys(PRICE_PER_UNIT);

/**
 * Monthly price of a custom alphanumeric sender id (not stated; ours): a hundred units' worth.
 * Sending from a phone number costs nothing extra.
 */
export const CUSTOM_SENDER_MONTHLY_PRICE: Record<string, number> = {
  NOK: 99,
  SEK: 99,
  DKK: 79,
  EUR: 10,
  USD: 10,
};

/** Money to two decimals, without binary-fraction noise (0.1 × 3 = 0.3, not 0.30000000000000004). */
export const money = (amount: number): number => Math.round(amount * 100) / 100;

export const costOf = (units: number, currency: string): number =>
  money(units * (PRICE_PER_UNIT[currency] ?? 0));
