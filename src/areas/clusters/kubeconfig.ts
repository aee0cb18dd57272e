import type { Principal } from '../../kernel/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { SecretBox } from '../../kernel/secrets.js';
import type { Store } from '../../kernel/store/store.js';
import { API_PORT } from './cluster-view.js';
import { clusterErrors } from './errors.js';
import { phaseOf, serves } from './lifecycle.js';
import type { K8sClustersTable } from './migrations.js';
import { ClusterRepo } from './repo.js';
import { actorOf, customerLock, historyEntry, presentCluster } from './service.js';
import { createCa, issueClientCert } from './x509.js';

/** The client credential's life: a week by default (as DOKS), from 10 minutes to 30 days. */
export const KUBECONFIG_EXPIRY = { default: 7 * 86_400, min: 600, max: 30 * 86_400 };
/** The cluster CA's life, as kubeadm gives it. */
const CA_YEARS = 10;
/** Client certificates start a little in the past, so a client whose clock lags accepts them (kubeadm's backdate). */
const BACKDATE_MS = 5 * 60_000;
const CA_SUBJECT = { commonName: 'kubernetes' };
/** The group whose members the API server treats as cluster administrators. */
const ADMIN_GROUP = 'system:masters';

/**
 * `GET …/kubeconfig`: the cluster's CA (made once per cluster, at the first download, its key
 * sealed with Fjord's data key) and a client certificate issued for this one download, with the
 * expiry asked for. Every download is a history entry naming the credential and its expiry.
 */
export class KubeconfigService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
  ) {}

  async download(principal: Principal, id: string, expirySeconds: number | undefined): Promise<string> {
    const seconds = expirySeconds ?? KUBECONFIG_EXPIRY.default;
    if (!Number.isInteger(seconds) || seconds < KUBECONFIG_EXPIRY.min || seconds > KUBECONFIG_EXPIRY.max)
      throw clusterErrors.invalid(
        `expiry_seconds is ${KUBECONFIG_EXPIRY.min}-${KUBECONFIG_EXPIRY.max}.`,
        '/query/expiry_seconds',
      );
    const now = this.clock.nowMs();
    return this.store.unitOfWork({ locks: [customerLock(principal.customerId)] }, async ({ tx }) => {
      const repo = ClusterRepo.over(tx);
      const row = await presentCluster(repo, principal.customerId, id, now);
      const status = phaseOf(row, now).status;
      if (!serves(status)) throw clusterErrors.notReady(status, 'a kubeconfig');
      let ca = await repo.ca(id);
      if (!ca) {
        const made = await createCa(CA_SUBJECT.commonName, now, CA_YEARS);
        ca = {
          cluster_id: id,
          cert_pem: made.certPem,
          key_sealed: this.secrets.seal(made.keyPem),
          created_at: now,
        };
        await repo.insertCa(ca);
      }
      const credentialId = newId();
      const user = `fjord-admin:${credentialId}`;
      const expiresAt = now + seconds * 1000;
      const client = await issueClientCert(
        { certPem: ca.cert_pem, keyPem: this.secrets.open(ca.key_sealed) },
        { commonName: user, organization: ADMIN_GROUP },
        now - BACKDATE_MS,
        expiresAt,
      );
      await repo.record(
        historyEntry(
          id,
          actorOf(principal),
          'cluster.kubeconfig',
          {
            credential_id: credentialId,
            user,
            certificate_serial: client.serialHex,
            expires_at: new Date(expiresAt).toISOString(),
          },
          now,
        ),
      );
      return renderKubeconfig(row, {
        caPem: ca.cert_pem,
        certPem: client.certPem,
        keyPem: client.keyPem,
        credentialId,
        user,
        issuedAt: now,
        expiresAt,
      });
    });
  }
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
/** Every name is quoted: a cluster called `null`, `yes` or `1234` stays a string to YAML readers. */
const q = (s: string) => JSON.stringify(s);

/**
 * The kubeconfig as `kubectl` writes one. The expiry is stated twice: in the comment at the top for
 * people, and in the user's `fjord.credential` extension for tools (kubectl keeps extensions).
 */
export function renderKubeconfig(
  row: K8sClustersTable,
  c: {
    caPem: string;
    certPem: string;
    keyPem: string;
    credentialId: string;
    user: string;
    issuedAt: number;
    expiresAt: number;
  },
): string {
  const expires = new Date(c.expiresAt).toISOString();
  const issued = new Date(c.issuedAt).toISOString();
  const userName = `${row.technical_name}-admin`;
  return [
    `# Kubeconfig for the Fjord cluster "${row.name}" (${row.technical_name}).`,
    `# Its client certificate (credential ${c.credentialId}) expires at ${expires}:`,
    '# download a new kubeconfig before then. It grants cluster-admin: keep it secret.',
    '# Simulated cluster: no Kubernetes API server answers at this address.',
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${q(row.technical_name)}`,
    '  cluster:',
    `    certificate-authority-data: ${b64(c.caPem)}`,
    `    server: ${q(`https://${row.gateway_ip}:${API_PORT}`)}`,
    'users:',
    `- name: ${q(userName)}`,
    '  user:',
    `    client-certificate-data: ${b64(c.certPem)}`,
    `    client-key-data: ${b64(c.keyPem)}`,
    '    extensions:',
    '    - name: fjord.credential',
    '      extension:',
    `        credential_id: "${c.credentialId}"`,
    `        username: "${c.user}"`,
    `        issued_at: "${issued}"`,
    `        expires_at: "${expires}"`,
    'contexts:',
    `- name: ${q(row.name)}`,
    '  context:',
    `    cluster: ${q(row.technical_name)}`,
    `    user: ${q(userName)}`,
    `current-context: ${q(row.name)}`,
    'preferences: {}',
    '',
  ].join('\n');
}
