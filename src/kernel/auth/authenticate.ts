import type { Clock } from '../clock.js';
import { kernelErrors } from '../errors.js';
import { constantTimeEqual } from '../secrets.js';
import { scopesSatisfy } from './catalogue.js';
import { type ConsoleSessions, CSRF_HEADER, cookieValue, SESSION_COOKIE } from './console-sessions.js';
import type { IdentityService } from './identity.js';
import type { OidcVerifier } from './oidc.js';
import type { Access, OperatorPrincipal, Principal } from './principal.js';
import { looksLikeJwt } from './tokens.js';

export interface PresentedCredential {
  token: string;
  via: 'x-api-key' | 'bearer' | 'console';
  /** The CSRF header sent with a console session cookie. */
  csrf?: string | null;
}

/**
 * Reads the credential from `X-API-Key` or `Authorization: Bearer`, else the console's session
 * cookie (which counts only with its CSRF header: see ConsoleSessions.identify).
 */
export function presentedCredential(
  headers: Record<string, string | string[] | undefined>,
): PresentedCredential | null {
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim()) return { token: apiKey.trim(), via: 'x-api-key' };
  const auth = headers['authorization'];
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return { token: m[1]!, via: 'bearer' };
  }
  const session = cookieValue(headers['cookie'], SESSION_COOKIE);
  if (session) {
    const csrf = headers[CSRF_HEADER];
    return { token: session, via: 'console', csrf: typeof csrf === 'string' ? csrf : null };
  }
  return null;
}

/**
 * Decides whether a presented credential may call a route. 401 when the credential is missing,
 * unknown, expired or revoked; 403 when it is valid but lacks the service or scope.
 */
export class Authenticator {
  constructor(
    private readonly identity: IdentityService,
    private readonly oidc: OidcVerifier | null,
    private readonly operatorToken: () => string | null,
    private readonly clock: Clock,
    private readonly consoleSessions: ConsoleSessions | null = null,
  ) {}

  /**
   * Who is calling (401 when nobody valid is). Deciding whether they may call the route is
   * `authorise`, a separate step so that a valid credential is rate limited even when refused.
   */
  async identify(
    access: Access,
    presented: PresentedCredential | null,
  ): Promise<Principal | OperatorPrincipal | null> {
    if (access.kind === 'public') return null;
    if (!presented) throw kernelErrors.unauthenticated();
    if (presented.via === 'console') {
      if (!this.consoleSessions) throw kernelErrors.unauthenticated();
      const principal = await this.consoleSessions.identify(presented.token, presented.csrf ?? null);
      // An operator's session opens the operator's routes only, a customer's only the customer's.
      if ((access.kind === 'operator') !== (principal.customerId === null))
        throw kernelErrors.unauthenticated(
          access.kind === 'operator' ? 'A valid operator token is required.' : undefined,
        );
      return principal;
    }
    if (access.kind === 'operator') {
      const expected = this.operatorToken();
      if (!expected || !constantTimeEqual(presented.token, expected)) {
        throw kernelErrors.unauthenticated('A valid operator token is required.');
      }
      return { customerId: null, credential: { kind: 'operator', id: 'operator' } };
    }
    // A JWT is identified even where OIDC is not accepted, so `authorise` can answer 403 (a valid
    // credential of the wrong kind) rather than 401.
    if (presented.via === 'bearer' && !access.bearer && !looksLikeJwt(presented.token)) {
      throw kernelErrors.unauthenticated('This endpoint takes its credential in the X-API-Key header.');
    }
    if (looksLikeJwt(presented.token)) {
      const claims = this.oidc
        ? await this.oidc.verify(presented.token, Math.floor(this.clock.nowMs() / 1000))
        : null;
      if (!claims) throw kernelErrors.unauthenticated('The bearer token is not valid.');
      const customerId = await this.identity.customerForOidc(claims.issuer, claims.subject, claims.email);
      if (!customerId) throw kernelErrors.unauthenticated('No customer is linked to this identity.');
      return {
        customerId,
        credential: { kind: 'oidc', id: `${claims.issuer}#${claims.subject}`, ...claims },
      };
    }
    const found = await this.identity.authenticateKey(presented.token);
    if (!found) throw kernelErrors.unauthenticated('The API key is invalid, expired or revoked.');
    return found;
  }

  /**
   * `identify` without a promise when the answer is at hand (public routes, the operator token,
   * an API key in the credential cache); undefined when it needs the asynchronous `identify`
   * (a JWT, a key not cached).
   */
  identifyNow(
    access: Access,
    presented: PresentedCredential | null,
  ): Principal | OperatorPrincipal | null | undefined {
    if (access.kind === 'public') return null;
    if (
      !presented ||
      access.kind === 'operator' ||
      presented.via === 'console' ||
      looksLikeJwt(presented.token)
    )
      return undefined;
    if (presented.via === 'bearer' && !access.bearer) return undefined;
    const found = this.identity.authenticateKeyNow(presented.token);
    if (found === null) throw kernelErrors.unauthenticated('The API key is invalid, expired or revoked.');
    return found;
  }

  /** 403 unless the identified credential is one the route accepts. */
  authorise(access: Access, principal: Principal | OperatorPrincipal | null): void {
    if (access.kind !== 'customer' || !principal) return;
    const { credential } = principal;
    if (credential.kind === 'oidc') {
      // A console session from the issuer acts with the customer's full rights (as an OIDC token
      // does) wherever a person's credential is accepted: every route a PAT may call.
      const personal = credential.viaConsole === true && (access.scopes?.length ?? 0) > 0;
      if (!access.oidc && !personal)
        throw kernelErrors.forbidden('This endpoint does not accept OIDC tokens; use an API key.');
    } else if (credential.kind === 'service_key') {
      const ok = access.services === 'any' || (access.services ?? []).includes(credential.service);
      if (!ok) {
        const wanted = access.services?.length
          ? `a service key for ${[access.services].flat().join(' or ')}`
          : 'a PAT';
        const orPat = access.scopes?.length ? ` or a PAT with ${access.scopes.join(' or ')}` : '';
        throw kernelErrors.forbidden(
          `This endpoint needs ${wanted}${orPat}; the key is for "${credential.service}".`,
        );
      }
    } else if (credential.kind === 'pat') {
      if (!access.scopes?.length)
        throw kernelErrors.forbidden('This endpoint does not accept PATs; use a service key.');
      if (!scopesSatisfy(credential.scopes, access.scopes)) {
        throw kernelErrors.forbidden(`The PAT lacks the scope ${access.scopes.join(' or ')}.`);
      }
    }
  }
}
