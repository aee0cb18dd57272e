import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK } from 'jose';

/** A local OIDC issuer: discovery document (optional) and JWKS on 127.0.0.1. */
export interface Issuer {
  url: string;
  hits: Record<string, number>;
  close(): Promise<void>;
}

export async function startIssuer(publicJwks: JWK[], opts: { discovery: boolean }): Promise<Issuer> {
  const hits: Record<string, number> = {};
  let url = '';
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits[path] = (hits[path] ?? 0) + 1;
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (path === '/.well-known/openid-configuration' && opts.discovery) {
      return json(200, { issuer: url, jwks_uri: `${url}/keys/jwks.json` });
    }
    if (path === '/keys/jwks.json') return json(200, { keys: publicJwks });
    json(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface SigningKey {
  alg: 'ES256' | 'RS256';
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

export async function signingKey(alg: 'ES256' | 'RS256', kid: string): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg);
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { alg, kid, privateKey, jwk };
}
