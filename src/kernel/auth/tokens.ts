import { randomString } from '../ids.js';

/**
 * Secret formats. The visible prefix tells people and secret scanners what a leaked string is
 * (as Stripe's `sk_live_` and GitHub's `ghp_` do); `key_prefix` adds 8 random characters so
 * that a customer can tell their keys apart.
 */
export const TOKEN_PREFIX = { service: 'fjk_', account: 'fjp_' } as const;

export function newApiToken(keyType: 'service' | 'account'): { token: string; keyPrefix: string } {
  const token = TOKEN_PREFIX[keyType] + randomString(40);
  return { token, keyPrefix: token.slice(0, TOKEN_PREFIX[keyType].length + 8) };
}

const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;
/** Three dot-separated base64url parts. Asked of every keyed request: a key (no dot) skips the regex. */
export const looksLikeJwt = (token: string): boolean => token.includes('.') && JWT_SHAPE.test(token);
