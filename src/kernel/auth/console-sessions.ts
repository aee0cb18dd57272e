import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { kernelErrors } from '../errors.js';
import { constantTimeEqual, hashToken } from '../secrets.js';
import type { KernelTables } from '../store/kernel-tables.js';
import type { Store } from '../store/store.js';
import type { IdentityService } from './identity.js';
import type { OperatorPrincipal, Principal } from './principal.js';
import { looksLikeJwt } from './tokens.js';

/** The session cookie's name. Not `__Host-`: that prefix needs `Secure`, and Fjord may run on plain loopback HTTP. */
export const SESSION_COOKIE = 'fjord_console';
/** The header that must carry the session's CSRF token on every API call the cookie authenticates. */
export const CSRF_HEADER = 'x-fjord-csrf';
/** How long a console sign-in lasts (wall time), unless the PAT it was made from expires first. */
export const SESSION_SECONDS = 8 * 3600;

export interface ConsoleSession {
  kind: 'customer' | 'operator';
  customerId: string | null;
  expiresAt: number;
}

/**
 * Console sign-ins. A PAT (or the operator token) is exchanged once for a random session token
 * that lives only in an HttpOnly cookie; the store keeps its hash and the hash of the credential
 * it came from, so revoking that PAT, suspending the customer or changing the operator token ends
 * the session too. The CSRF token is derived from the session token (a hash of it under another
 * label): a page of another origin can neither read the cookie nor compute the header.
 *
 * Session times are wall time (`now`), not the emulator's clock: moving the emulated clock a day
 * forward must not sign the person at the console out.
 */
export class ConsoleSessions {
  private readonly db: Kysely<KernelTables>;
  constructor(
    store: Store,
    private readonly identity: IdentityService,
    private readonly operatorToken: () => string | null,
    private readonly now: () => number,
  ) {
    this.db = store.typed<KernelTables>();
  }

  static csrfOf(sessionToken: string): string {
    return hashToken(`fjord-console-csrf:${sessionToken}`).slice(0, 43);
  }

  /** Exchanges a PAT or the operator token for a session; 401 for anything else. */
  async signIn(token: string): Promise<SignedIn> {
    const now = this.now();
    const operator = this.operatorToken();
    let row: KernelTables['console_sessions'];
    const sessionToken = newSessionToken();
    const base = { token_hash: hashToken(sessionToken), created_at: now, oidc_identity: null };
    if (operator && constantTimeEqual(token, operator)) {
      row = {
        ...base,
        customer_id: null,
        key_hash: null,
        operator_hash: hashToken(operator),
        expires_at: now + SESSION_SECONDS * 1000,
      };
    } else {
      const found = looksLikeJwt(token) ? null : await this.identity.authenticateKey(token);
      if (!found || found.credential.kind !== 'pat')
        throw kernelErrors.unauthenticated(
          'Sign in with a personal access token (PAT) or the operator token.',
        );
      const patExpiry = found.credential.expiresAt ?? Number.POSITIVE_INFINITY;
      row = {
        ...base,
        customer_id: found.customerId,
        key_hash: hashToken(token),
        operator_hash: null,
        expires_at: Math.min(now + SESSION_SECONDS * 1000, patExpiry),
      };
    }
    return this.start(sessionToken, row);
  }

  /**
   * A session for a customer whose identity the OIDC issuer has just vouched for (the console's
   * authorization-code sign-in). It lives while that identity stays linked to an active customer.
   */
  async signInOidc(customerId: string, issuer: string, subject: string): Promise<SignedIn> {
    const now = this.now();
    const sessionToken = newSessionToken();
    return this.start(sessionToken, {
      token_hash: hashToken(sessionToken),
      created_at: now,
      customer_id: customerId,
      key_hash: null,
      operator_hash: null,
      oidc_identity: `${issuer}#${subject}`,
      expires_at: now + SESSION_SECONDS * 1000,
    });
  }

  private async start(sessionToken: string, row: KernelTables['console_sessions']): Promise<SignedIn> {
    await this.db.insertInto('console_sessions').values(row).execute();
    // Expired sessions are cleared as new ones start: no job needed for a table this small.
    await this.db.deleteFrom('console_sessions').where('expires_at', '<=', row.created_at).execute();
    return { token: sessionToken, csrf: ConsoleSessions.csrfOf(sessionToken), session: sessionOf(row) };
  }

  /** The session a cookie names, or null when it is unknown, expired or its credential is gone. */
  async lookUp(
    sessionToken: string,
  ): Promise<(ConsoleSession & { principal: Principal | OperatorPrincipal }) | null> {
    const row = await this.db
      .selectFrom('console_sessions')
      .selectAll()
      .where('token_hash', '=', hashToken(sessionToken))
      .executeTakeFirst();
    if (!row || row.expires_at <= this.now()) return null;
    if (row.operator_hash !== null) {
      const operator = this.operatorToken();
      if (!operator || !constantTimeEqual(hashToken(operator), row.operator_hash)) return null;
      return {
        ...sessionOf(row),
        principal: { customerId: null, credential: { kind: 'operator', id: 'operator' } },
      };
    }
    if (row.oidc_identity !== null) {
      // The issuer's URL holds no `#`: the subject is everything after the first one.
      const at = row.oidc_identity.indexOf('#');
      const issuer = row.oidc_identity.slice(0, at);
      const subject = row.oidc_identity.slice(at + 1);
      const customerId = await this.identity.customerForOidc(issuer, subject, null);
      if (!customerId || customerId !== row.customer_id) return null;
      return {
        ...sessionOf(row),
        principal: {
          customerId,
          credential: { kind: 'oidc', id: row.oidc_identity, issuer, subject, viaConsole: true },
        },
      };
    }
    const found = row.key_hash ? await this.identity.authenticateKeyHash(row.key_hash) : null;
    if (!found || found.customerId !== row.customer_id) return null;
    return { ...sessionOf(row), principal: found };
  }

  /**
   * Who an API call authenticated by the session cookie is: 401 unless the CSRF header matches.
   * A cookie alone never authenticates (a form posted from another site carries it, not the header).
   */
  async identify(sessionToken: string, csrf: string | null): Promise<Principal | OperatorPrincipal> {
    if (!csrf || !constantTimeEqual(csrf, ConsoleSessions.csrfOf(sessionToken)))
      throw kernelErrors.unauthenticated(
        `A console session needs its CSRF token in the ${CSRF_HEADER} header.`,
      );
    const found = await this.lookUp(sessionToken);
    if (!found) throw kernelErrors.unauthenticated('The console session has ended; sign in again.');
    return found.principal;
  }

  async signOut(sessionToken: string): Promise<void> {
    await this.db.deleteFrom('console_sessions').where('token_hash', '=', hashToken(sessionToken)).execute();
  }
}

type SignedIn = { token: string; csrf: string; session: ConsoleSession };
const newSessionToken = () => `fjs_${randomBytes(32).toString('base64url')}`;

const sessionOf = (row: KernelTables['console_sessions']): ConsoleSession => ({
  kind: row.operator_hash !== null ? 'operator' : 'customer',
  customerId: row.customer_id,
  expiresAt: row.expires_at,
});

/** The value of one cookie in a Cookie header. */
export function cookieValue(header: string | string[] | undefined, name: string): string | null {
  if (typeof header !== 'string') return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}
