import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import type * as Acme from 'acme-client';
import type { Kernel } from '../../kernel/kernel.js';
import { lazyPackage } from '../../kernel/lazy.js';
import type { IssuedCertificate } from './certificates.js';
import { AppsRepo } from './repo.js';

/** acme-client (with its axios), loaded when a certificate is ordered: not at every start. */
const acmeClient = lazyPackage<typeof Acme>('acme-client');

/** Where challenges wait for the ACME server's request: the store, so every process sees them. */
export interface AcmeChallenges {
  put(token: string, keyAuthorization: string): Promise<void>;
  get(token: string): Promise<string | null>;
  delete(token: string): Promise<void>;
}

/** The store's challenges table (dated by the real clock: it is about processes cut off, not customers' time). */
export function acmeChallenges(kernel: Kernel): AcmeChallenges {
  const repo = AppsRepo.of(kernel.store);
  return {
    put: (token, keyAuthorization) => repo.putAcmeChallenge(token, keyAuthorization, Date.now()),
    get: (token) => repo.acmeChallenge(token),
    delete: (token) => repo.deleteAcmeChallenge(token),
  };
}

/**
 * Certificates from an ACME directory (RFC 8555) through `acme-client`, with HTTP-01 challenges:
 * the apps ingress answers `/.well-known/acme-challenge/<token>` while an order is validated. The
 * ACME server's request may reach any process running the ingress, not the one that placed the
 * order, so the key authorizations are kept in the store. The account key lives in this process
 * (a new account per start).
 */
export class AcmeIssuer {
  private client: Acme.Client | null = null;

  constructor(
    readonly directoryUrl: string,
    caFile: string | null,
    readonly challenges: AcmeChallenges,
  ) {
    // acme-client talks through its own axios: trust a private directory's CA there.
    if (caFile) acmeClient().axios.defaults.httpsAgent = new Agent({ ca: readFileSync(caFile, 'utf8') });
  }

  async issue(hostName: string): Promise<IssuedCertificate> {
    const acme = acmeClient();
    this.client ??= new acme.Client({
      directoryUrl: this.directoryUrl,
      accountKey: await acme.crypto.createPrivateEcdsaKey(),
    });
    const [key, csr] = await acme.crypto.createCsr(
      { commonName: hostName, altNames: [hostName] },
      await acme.crypto.createPrivateEcdsaKey(),
    );
    const certPem = await this.client.auto({
      csr,
      termsOfServiceAgreed: true,
      challengePriority: ['http-01'],
      // acme-client's own pre-check fetches the challenge through the system resolver, which need
      // not see the name as the ACME server does; the server's validation is what counts.
      skipChallengeVerification: true,
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
        await this.challenges.put(challenge.token, keyAuthorization);
      },
      challengeRemoveFn: async (_authz, challenge) => {
        await this.challenges.delete(challenge.token);
      },
    });
    const leaf = new X509Certificate(certPem);
    return {
      certPem,
      keyPem: key.toString(),
      notBefore: Date.parse(leaf.validFrom),
      notAfter: Date.parse(leaf.validTo),
    };
  }
}
