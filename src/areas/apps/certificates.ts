import {
  ECDSA_P256 as ALG,
  importSigningKey,
  loadX509,
  newEcdsaKeys,
  privateKeyPem,
  randomSerialHex as serial,
} from '../../kernel/x509.js';

const DAY = 86_400_000;
/** Certificates last 90 days, like ACME's; renewal starts 30 days before expiry. */
export const CERT_DAYS = 90;
export const RENEW_BEFORE_DAYS = 30;
const CA_YEARS = 10;

export interface IssuedCertificate {
  /** The leaf certificate then the CA's, PEM. */
  certPem: string;
  keyPem: string;
  notBefore: number;
  notAfter: number;
}

/** The CA Fjord creates for the embedded default: its certificate and private key, PEM. */
export interface LocalCaMaterial {
  certPem: string;
  keyPem: string;
}

/** A new self-signed CA (ECDSA P-256) valid for ten years from `now`. */
export async function createLocalCa(now: number, label: string): Promise<LocalCaMaterial> {
  const x509 = await loadX509();
  const keys = await newEcdsaKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=Fjord apps local CA (${label})`,
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + CA_YEARS * 365 * DAY),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    certPem: cert.toString('pem'),
    keyPem: await privateKeyPem(keys.privateKey),
  };
}

/** A server certificate for `hostName`, signed by the local CA, valid `CERT_DAYS` from `now`. */
export async function issueFromLocalCa(
  ca: LocalCaMaterial,
  hostName: string,
  now: number,
): Promise<IssuedCertificate> {
  const x509 = await loadX509();
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await importSigningKey(ca.keyPem);
  const keys = await newEcdsaKeys();
  // Backdated a day: clients whose clock lags Fjord's (the emulator's clock moves ahead) still accept it.
  const notBefore = now - DAY;
  const notAfter = now + CERT_DAYS * DAY;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${hostName}`,
    issuer: caCert.subject,
    notBefore: new Date(notBefore),
    notAfter: new Date(notAfter),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: hostName }]),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return {
    certPem: `${cert.toString('pem')}\n${ca.certPem}`,
    keyPem: await privateKeyPem(keys.privateKey),
    notBefore,
    notAfter,
  };
}
