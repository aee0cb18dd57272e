import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { type SigningKey, signingKey } from './oidc-issuer.js';

/** Who the issuer signs in: the next person to reach its authorization endpoint. */
export interface IssuerUser {
  sub: string;
  email: string;
  email_verified: boolean;
}

/** One authorization request as the issuer received it, and what its token endpoint checked. */
export interface AuthorizationSeen {
  query: Record<string, string>;
  /** The verifier sent to the token endpoint hashed to the challenge (S256). */
  pkceVerified: boolean | null;
}

export interface LoginIssuer {
  url: string;
  clientId: string;
  user: IssuerUser;
  seen: AuthorizationSeen[];
  close(): Promise<void>;
}

/**
 * A minimal OIDC issuer on 127.0.0.1 for browser tests of the authorization-code flow: discovery,
 * JWKS, an authorization endpoint that signs in `user` at once (a page with one "Continue" button,
 * so the browser really visits the issuer), and a token endpoint that checks the code, the
 * client id, the redirect address and the PKCE verifier (S256) before it issues a signed ID token
 * carrying the request's nonce. A code is good once.
 */
export async function startLoginIssuer(clientId: string, user: IssuerUser): Promise<LoginIssuer> {
  const key: SigningKey = await signingKey('ES256', 'login-key');
  const seen: AuthorizationSeen[] = [];
  const codes = new Map<string, { query: Record<string, string>; seen: AuthorizationSeen }>();
  let url = '';
  const server: Server = createServer((req, res) => {
    const at = new URL(req.url ?? '/', url);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    if (at.pathname === '/.well-known/openid-configuration')
      return json(200, {
        issuer: url,
        authorization_endpoint: `${url}/authorize`,
        token_endpoint: `${url}/token`,
        jwks_uri: `${url}/jwks`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        id_token_signing_alg_values_supported: ['ES256'],
      });
    if (at.pathname === '/jwks') return json(200, { keys: [key.jwk] });
    if (at.pathname === '/authorize' && req.method === 'GET') {
      const query = Object.fromEntries(at.searchParams);
      if (query['client_id'] !== clientId || query['response_type'] !== 'code')
        return json(400, { error: 'unauthorized_client' });
      const entry: AuthorizationSeen = { query, pkceVerified: null };
      seen.push(entry);
      const code = randomBytes(16).toString('base64url');
      codes.set(code, { query, seen: entry });
      const back = new URL(query['redirect_uri'] ?? '');
      back.searchParams.set('code', code);
      if (query['state']) back.searchParams.set('state', query['state']);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><html lang="en"><head><title>Test issuer</title></head><body><main><h1>Test issuer</h1>` +
          `<p>Signing in ${user.email}.</p><a href="${escapeHtml(back.toString())}">Continue</a></main></body></html>`,
      );
      return;
    }
    if (at.pathname === '/token' && req.method === 'POST') {
      void readForm(req).then(async (form) => {
        const grant = codes.get(form['code'] ?? '');
        codes.delete(form['code'] ?? '');
        if (!grant || form['grant_type'] !== 'authorization_code')
          return json(400, { error: 'invalid_grant' });
        const challenge = createHash('sha256')
          .update(form['code_verifier'] ?? '')
          .digest('base64url');
        grant.seen.pkceVerified =
          grant.query['code_challenge_method'] === 'S256' && challenge === grant.query['code_challenge'];
        if (
          !grant.seen.pkceVerified ||
          form['client_id'] !== clientId ||
          form['redirect_uri'] !== grant.query['redirect_uri']
        )
          return json(400, { error: 'invalid_grant' });
        const idToken = await new SignJWT({
          email: user.email,
          email_verified: user.email_verified,
          nonce: grant.query['nonce'],
        })
          .setProtectedHeader({ alg: key.alg, kid: key.kid })
          .setIssuer(url)
          .setSubject(user.sub)
          .setAudience(clientId)
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(key.privateKey);
        json(200, { access_token: randomBytes(16).toString('hex'), token_type: 'Bearer', id_token: idToken });
      });
      return;
    }
    json(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    clientId,
    user,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readForm(req: IncomingMessage): Promise<Record<string, string>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
