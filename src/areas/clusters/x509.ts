import {
  ECDSA_P256,
  importSigningKey,
  loadX509,
  newEcdsaKeys,
  privateKeyPem,
  randomSerialHex,
} from '../../kernel/x509.js';

/**
 * What a kubeconfig carries: a self-signed cluster CA and client certificates it signs, ECDSA
 * P-256 with SHA-256, with the extensions kubeadm gives its own (a name, a validity, a key, the
 * usages and the key identifiers).
 */

export interface Subject {
  commonName: string;
  organization?: string;
}
/** Organization before common name, as kubeadm orders them (O=system:masters, CN=user). */
const name = (s: Subject): Record<string, string[]>[] => [
  ...(s.organization ? [{ O: [s.organization] }] : []),
  { CN: [s.commonName] },
];

export interface IssuedCertificate {
  certPem: string;
  keyPem: string;
  serialHex: string;
  notAfter: number;
}

/** A self-signed CA (`kubernetes` as kubeadm names it), valid from `notBefore` for `years`. */
export async function createCa(
  commonName: string,
  notBefore: number,
  years: number,
): Promise<IssuedCertificate> {
  const x509 = await loadX509();
  const until = new Date(notBefore);
  until.setUTCFullYear(until.getUTCFullYear() + years);
  const keys = await newEcdsaKeys();
  const serialHex = randomSerialHex();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialHex,
    name: name({ commonName }),
    notBefore: new Date(notBefore),
    notAfter: until,
    signingAlgorithm: ECDSA_P256,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    certPem: cert.toString('pem'),
    keyPem: await privateKeyPem(keys.privateKey),
    serialHex,
    notAfter: until.getTime(),
  };
}

/** A client certificate (CN = user, O = group, as the API server reads them) signed by the CA. */
export async function issueClientCert(
  ca: { certPem: string; keyPem: string },
  subject: Subject,
  notBefore: number,
  notAfter: number,
): Promise<IssuedCertificate> {
  const x509 = await loadX509();
  const caCert = new x509.X509Certificate(ca.certPem);
  const keys = await newEcdsaKeys();
  const serialHex = randomSerialHex();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialHex,
    subject: name(subject),
    // The CA's own encoded name, byte for byte: verifiers match an issuer to its CA on those bytes.
    issuer: caCert.subjectName,
    notBefore: new Date(notBefore),
    notAfter: new Date(notAfter),
    signingAlgorithm: ECDSA_P256,
    publicKey: keys.publicKey,
    signingKey: await importSigningKey(ca.keyPem),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return {
    certPem: cert.toString('pem'),
    keyPem: await privateKeyPem(keys.privateKey),
    serialHex,
    notAfter,
  };
}
