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
  private discovered: Promise<Discovery> | null = null;
  constructor(private readonly settings: OidcSettings) {}

  /** A bearer token for the API: the configured audience, if any. */
  async verify(token: string, nowSeconds: number): Promise<OidcClaims | null> {
    const payload = await this.payload(token, nowSeconds, this.settings.audience);
    return payload ? claimsOf(this.settings.issuer, payload) : null;
  }

  /**
   * An ID token from the authorization-code sign-in: same issuer and keys as bearer tokens, but
   * its audience is the console's client id, and it must carry the nonce this sign-in sent (so a
   * token issued for another sign-in cannot be replayed into this one).
   */
  async verifyIdToken(
    token: string,
    nowSeconds: number,
    expected: { clientId: string; nonce: string },
  ): Promise<OidcClaims | null> {
    const payload = await this.payload(token, nowSeconds, expected.clientId);
    if (!payload || typeof payload['nonce'] !== 'string' || payload['nonce'] !== expected.nonce) return null;
    return claimsOf(this.settings.issuer, payload);
  }

  /** The issuer's discovery document (read once; a failed read is tried again next time). */
  discovery(): Promise<Discovery> {
    if (!this.discovered) {
      const url = `${this.settings.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
      this.discovered = fetch(url, { signal: AbortSignal.timeout(5000) })
        .then(async (res) => {
          if (!res.ok) throw new Error(`OIDC discovery failed: ${res.status}`);
          return (await res.json()) as Discovery;
        })
        .catch((err: unknown) => {
          this.discovered = null;
          throw err;
        });
    }
    return this.discovered;
  }

  private async payload(token: string, nowSeconds: number, audience: string | null) {
    try {
      const jwks = await this.keySet();
      const { jwtVerify } = await jose();
      const { payload } = await jwtVerify(token, jwks, {
        issuer: this.settings.issuer,
        audience: audience ?? undefined,
        currentDate: new Date(nowSeconds * 1000),
        clockTolerance: 60,
      });
      return payload.sub ? payload : null;
    } catch {
      return null;
    }
  }

  private async keySet() {
    if (this.jwks) return this.jwks;
    const url = this.settings.jwksUrl ?? (await this.discovery()).jwks_uri ?? null;
    if (!url) throw new Error('OIDC discovery document has no jwks_uri');
    const { createRemoteJWKSet } = await jose();
    this.jwks = createRemoteJWKSet(new URL(url));
    return this.jwks;
  }
}

/** The fields of an issuer's discovery document Fjord reads. */
export interface Discovery {
  jwks_uri?: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
}

function claimsOf(issuer: string, payload: JWTPayload): OidcClaims {
  const verifiedEmail =
    // Only an e-mail the issuer vouches for may link a login to an existing customer.
    typeof payload['email'] === 'string' && payload['email_verified'] === true ? payload['email'] : null;
  return { issuer, subject: payload.sub!, email: verifiedEmail };
}
