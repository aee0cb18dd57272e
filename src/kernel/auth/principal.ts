import type { ServiceName } from './catalogue.js';

/** Who is calling. Every customer-facing route receives one; resources are looked up by `customerId`. */
export type Credential =
  | { kind: 'service_key'; id: string; service: ServiceName }
  | { kind: 'pat'; id: string; scopes: string[]; expiresAt: number | null }
  | {
      kind: 'oidc';
      id: string;
      issuer: string;
      subject: string;
      /** A console session signed in through the issuer: it opens every route a PAT may call. */
      viaConsole?: true;
    }
  | { kind: 'operator'; id: 'operator' };

export interface Principal {
  customerId: string;
  credential: Credential;
}

export interface OperatorPrincipal {
  customerId: null;
  credential: { kind: 'operator'; id: 'operator' };
}

/** What a route accepts. Every route declares one; the OpenAPI document shows it. */
export type Access = PublicAccess | OperatorAccess | CustomerAccess;
export type PublicAccess = { kind: 'public' };
export type OperatorAccess = { kind: 'operator' };
export type CustomerAccess = {
  kind: 'customer';
  /** A service key for one of these services is accepted. `'any'` accepts every service key. */
  services?: readonly ServiceName[] | 'any';
  /** A PAT holding any of these scopes is accepted. */
  scopes?: readonly string[];
  /** OIDC bearer tokens are accepted (they act with the customer's full rights). */
  oidc?: boolean;
  /** `Authorization: Bearer` is accepted besides `X-API-Key`. */
  bearer?: boolean;
};

export const publicAccess: PublicAccess = { kind: 'public' };
export const operatorAccess: OperatorAccess = { kind: 'operator' };
