import { createHash, randomBytes } from 'node:crypto';
import type { ConsoleSessions } from '../../kernel/auth/console-sessions.js';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { OidcVerifier } from '../../kernel/auth/oidc.js';
import { constantTimeEqual, type SecretBox } from '../../kernel/secrets.js';

/** The cookie that carries one sign-in's state, nonce and PKCE verifier from start to callback. */
export const FLOW_COOKIE = 'fjord_oidc_flow';
/** How long a person may take at the issuer's login page. */
export const FLOW_SECONDS = 600;
export const CALLBACK_PATH = '/console/oidc/callback';

/** Why a sign-in through the issuer ended without a session; the sign-in page words each one. */
export type OidcSignInProblem = 'issuer' | 'denied' | 'expired' | 'exchange' | 'token' | 'no_customer';

export class OidcSignInError extends Error {
  constructor(
    readonly problem: OidcSignInProblem,
    message: string,
  ) {
    super(message);
  }
}

export interface OidcClientSettings {
  clientId: string;
  clientSecret: string | null;
}

interface Flow {
  /** state */
  s: string;
  /** nonce */
  n: string;
  /** PKCE code verifier */
  v: string;
  /** expiry, epoch ms (wall time) */
  e: number;
}

const random = () => randomBytes(32).toString('base64url');

/**
 * The console's sign-in through the configured OIDC issuer: the authorization-code flow with PKCE
 * (S256), a `state` against cross-site request forgery and a `nonce` bound into the ID token.
 *
 * Nothing is stored between the two legs: the state, nonce and code verifier travel in a cookie
 * sealed with the data key (AES-GCM: unreadable and unforgeable), HttpOnly and scoped to
 * `/console/oidc`. The ID token is checked by the same verifier as the API's bearer tokens (the
 * issuer's keys), with the client id as its audience; the customer is the one linked to the
 * identity, or the active customer whose e-mail the issuer vouches for, as for bearer tokens.
 * Times are wall time, like the console's sessions: the emulator's clock does not move them.
 */
export class ConsoleOidcSignIn {
  constructor(
    private readonly deps: {
      verifier: OidcVerifier;
      client: OidcClientSettings;
      secrets: SecretBox;
      sessions: ConsoleSessions;
      identity: IdentityService;
      issuer: string;
      redirectUri: () => string;
      now: () => number;
    },
  ) {}

  /** Where to send the browser, and the sealed flow for its cookie. */
  async begin(): Promise<{ location: string; flow: string }> {
    const discovery = await this.deps.verifier.discovery().catch(() => null);
    if (!discovery?.authorization_endpoint)
      throw new OidcSignInError('issuer', 'The issuer’s discovery document names no authorization endpoint.');
    const flow: Flow = { s: random(), n: random(), v: random(), e: this.deps.now() + FLOW_SECONDS * 1000 };
    const to = new URL(discovery.authorization_endpoint);
    to.searchParams.set('response_type', 'code');
    to.searchParams.set('client_id', this.deps.client.clientId);
    to.searchParams.set('redirect_uri', this.deps.redirectUri());
    to.searchParams.set('scope', 'openid email profile');
    to.searchParams.set('state', flow.s);
    to.searchParams.set('nonce', flow.n);
    to.searchParams.set('code_challenge', createHash('sha256').update(flow.v).digest('base64url'));
    to.searchParams.set('code_challenge_method', 'S256');
    return { location: to.toString(), flow: this.deps.secrets.seal(JSON.stringify(flow)) };
  }

  /** The callback's query and the flow cookie, for a console session. */
  async finish(
    query: { code?: string; state?: string; error?: string },
    sealedFlow: string | null,
  ): Promise<Awaited<ReturnType<ConsoleSessions['signInOidc']>>> {
    const flow = this.openFlow(sealedFlow);
    if (!flow || !query.state || !constantTimeEqual(query.state, flow.s))
      throw new OidcSignInError('expired', 'The sign-in was not started here, or took too long.');
    if (query.error || !query.code)
      throw new OidcSignInError('denied', `The issuer did not sign you in (${query.error ?? 'no code'}).`);
    const idToken = await this.exchange(query.code, flow.v);
    const claims = await this.deps.verifier.verifyIdToken(idToken, Math.floor(this.deps.now() / 1000), {
      clientId: this.deps.client.clientId,
      nonce: flow.n,
    });
    if (!claims) throw new OidcSignInError('token', 'The issuer’s ID token did not verify.');
    const customerId = await this.deps.identity.customerForOidc(claims.issuer, claims.subject, claims.email);
    if (!customerId)
      throw new OidcSignInError('no_customer', 'No active customer is linked to this identity.');
    return this.deps.sessions.signInOidc(customerId, claims.issuer, claims.subject);
  }

  private openFlow(sealed: string | null): Flow | null {
    if (!sealed) return null;
    try {
      const flow = JSON.parse(this.deps.secrets.open(sealed)) as Flow;
      return flow.e > this.deps.now() ? flow : null;
    } catch {
      return null;
    }
  }

  /** The code and the PKCE verifier for the ID token, at the issuer's token endpoint. */
  private async exchange(code: string, verifier: string): Promise<string> {
    const discovery = await this.deps.verifier.discovery().catch(() => null);
    if (!discovery?.token_endpoint)
      throw new OidcSignInError('issuer', 'The issuer’s discovery document names no token endpoint.');
    const { clientId, clientSecret } = this.deps.client;
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: this.deps.redirectUri(),
      client_id: clientId,
      code_verifier: verifier,
    });
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (clientSecret)
      headers['authorization'] =
        `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;
    let answer: { id_token?: unknown };
    try {
      const res = await fetch(discovery.token_endpoint, {
        method: 'POST',
        headers,
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) throw new Error(`status ${res.status}`);
      answer = (await res.json()) as { id_token?: unknown };
    } catch (err) {
      throw new OidcSignInError('exchange', `The issuer refused the code (${(err as Error).message}).`);
    }
    if (typeof answer.id_token !== 'string')
      throw new OidcSignInError('exchange', 'The issuer answered without an ID token.');
    return answer.id_token;
  }
}
