import type { createRemoteJWKSet, JWTPayload } from 'jose';

/** jose is loaded with the first bearer JWT, not at start (only OIDC setups need it). */
const jose = () => import('jose');

export interface OidcSettings {
  issuer: string;
  audience: string | null;
  jwksUrl: string | null;
}

export interface OidcClaims {
  issuer: string;
  subject: string;
  email: string | null;
}

/**
 * Verifies bearer JWTs against the configured issuer's JWKS (found through its discovery
 * document unless a JWKS address is configured). jose caches the key set and refetches it when a
 * token names an unknown `kid`, so key rotation at the issuer needs nothing from us.
 */
export class OidcVerifier {
  private jwks: ReturnType<typeof createRemoteJWKSet> | null = null;
  constructor(private readonly settings: OidcSettings) {}

  async verify(token: string, nowSeconds: number): Promise<OidcClaims | null> {
    let payload: JWTPayload;
    try {
      const jwks = await this.keySet();
      const { jwtVerify } = await jose();
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: this.settings.issuer,
        audience: this.settings.audience ?? undefined,
        currentDate: new Date(nowSeconds * 1000),
        clockTolerance: 60,
      }));
    } catch {
      return null;
    }
    if (!payload.sub) return null;
    const verifiedEmail =
      // Only an e-mail the issuer vouches for may link a login to an existing customer.
      typeof payload['email'] === 'string' && payload['email_verified'] === true ? payload['email'] : null;
    return { issuer: this.settings.issuer, subject: payload.sub, email: verifiedEmail };
  }

  private async keySet() {
    if (this.jwks) return this.jwks;
    let url = this.settings.jwksUrl;
    if (!url) {
      const discovery = `${this.settings.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
      const res = await fetch(discovery, { signal: AbortSignal.timeout(5000) });
      if (!res.ok) throw new Error(`OIDC discovery failed: ${res.status}`);
      url = ((await res.json()) as { jwks_uri?: string }).jwks_uri ?? null;
      if (!url) throw new Error('OIDC discovery document has no jwks_uri');
    }
    const { createRemoteJWKSet } = await jose();
    this.jwks = createRemoteJWKSet(new URL(url));
    return this.jwks;
  }
}
