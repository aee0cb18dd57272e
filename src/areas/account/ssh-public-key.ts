import { createHash, createPublicKey, type JsonWebKey } from 'node:crypto';

/** Every refusal of user-supplied key text is this error, so callers can answer 422 without leaking other failures. */
export class SshKeyFormatError extends Error {
  override name = 'SshKeyFormatError';
}

export interface ParsedSshPublicKey {
  keyType: string;
  bits: number;
  fingerprint: string;
  comment: string | null;
  publicKey: string;
}

const ACCEPTED =
  'Accepted key types are ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521 ' +
  'and ssh-rsa (1024 bits or more).';

// The largest real keys (16384-bit RSA) encode to under 3 KiB; the cap keeps regexes and decoding cheap.
const MAX_LINE_LENGTH = 16 * 1024;
// OpenSSH's own ceiling for RSA moduli (SSHBUF_MAX_BIGNUM); larger values cannot be used by sshd anyway.
const MAX_RSA_BITS = 16384;
const MIN_RSA_BITS = 1024;

interface EcdsaCurve {
  curveId: string;
  jwkCurve: string;
  bits: number;
  coordinateBytes: number;
}

// A Map rather than an object literal so labels like "constructor" can never hit the prototype.
const ECDSA_CURVES = new Map<string, EcdsaCurve>([
  ['ecdsa-sha2-nistp256', { curveId: 'nistp256', jwkCurve: 'P-256', bits: 256, coordinateBytes: 32 }],
  ['ecdsa-sha2-nistp384', { curveId: 'nistp384', jwkCurve: 'P-384', bits: 384, coordinateBytes: 48 }],
  ['ecdsa-sha2-nistp521', { curveId: 'nistp521', jwkCurve: 'P-521', bits: 521, coordinateBytes: 66 }],
]);

const KEY_LABEL_PREFIX = /^(?:ssh-|ecdsa-|sk-)/;
const ALGORITHM_NAME = /^[A-Za-z0-9][A-Za-z0-9@._+-]{0,63}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function fail(message: string): never {
  throw new SshKeyFormatError(message);
}

function malformed(detail: string): never {
  fail(`The key data is malformed: ${detail}.`);
}

export function parseSshPublicKey(line: string): ParsedSshPublicKey {
  if (typeof line !== 'string') fail('The SSH public key must be given as text.');
  if (line.length > MAX_LINE_LENGTH) fail('The SSH public key is too long to be a single public key line.');
  // Checked before the line split so people who paste the wrong file get a message about that, not about newlines.
  if (/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----|^PuTTY-User-Key-File-/m.test(line)) {
    fail(
      'This is a private key. Paste the public key instead (the contents of the .pub file), and keep the private key secret.',
    );
  }
  if (/^\s*-{4,5} ?BEGIN /m.test(line)) {
    fail(
      'PEM and RFC 4716 key blocks are not accepted. Paste the single line from the OpenSSH .pub file ' +
        '(convert with `ssh-keygen -i -f <file>`), e.g. "ssh-ed25519 AAAA... you@host".',
    );
  }

  const trimmed = line.trim();
  if (trimmed === '') fail('The SSH public key is empty.');
  if (/[\r\n]/.test(trimmed)) fail('Paste exactly one SSH public key; the text spans several lines.');

  const fields = trimmed.split(/[ \t]+/);
  // Control characters would survive into authorized_keys files and terminal output.
  if (fields.some((field) => /\p{Cc}/u.test(field))) fail('The SSH public key contains control characters.');

  const [label = '', encoded, ...commentWords] = fields;
  checkLabel(label, fields);
  if (encoded === undefined) fail(`The key data is missing after "${label}".`);

  const blob = decodeBase64Strict(encoded);
  const bits = parseBlob(label, blob);
  const comment = commentWords.length > 0 ? commentWords.join(' ') : null;

  return {
    keyType: label,
    bits,
    fingerprint: 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, ''),
    comment,
    publicKey: comment === null ? `${label} ${encoded}` : `${label} ${encoded} ${comment}`,
  };
}

function checkLabel(label: string, fields: string[]): void {
  if (label === 'ssh-rsa' || label === 'ssh-ed25519' || ECDSA_CURVES.has(label)) return;
  if (label.endsWith('-cert-v01@openssh.com')) {
    fail(`SSH certificates are not accepted; paste the plain public key instead. ${ACCEPTED}`);
  }
  if (label.startsWith('sk-')) fail(`Hardware security keys (sk-*) are not supported. ${ACCEPTED}`);
  if (label === 'ssh-dss') fail(`DSA (ssh-dss) keys are insecure and not accepted. ${ACCEPTED}`);
  // Every wire blob starts with a short length prefix (00 00 00 ..), so its base64 starts with "AAAA".
  if (ALGORITHM_NAME.test(label) && fields[1] !== undefined && /^AAAA[A-Za-z0-9+/]+={0,2}$/.test(fields[1])) {
    fail(`Unsupported SSH key type "${label}". ${ACCEPTED}`);
  }
  // authorized_keys lines may start with options (command="...", restrict, from=...): the key type comes later.
  if (fields.slice(1).some((field) => KEY_LABEL_PREFIX.test(field))) {
    fail(
      'Key options such as command="..." or restrict are not accepted; paste only "<type> <key> [comment]".',
    );
  }
  fail(
    `This is not an OpenSSH public key; expected "<type> <base64 key> [comment]" as in a .pub file. ${ACCEPTED}`,
  );
}

function decodeBase64Strict(text: string): Buffer {
  if (text.length % 4 !== 0 || !BASE64.test(text)) malformed('it is not valid base64');
  const bytes = Buffer.from(text, 'base64');
  // Buffer.from ignores junk and stray padding bits; a round trip rejects anything that is not canonical.
  if (bytes.toString('base64') !== text) malformed('it is not valid base64');
  return bytes;
}

class WireReader {
  private offset = 0;

  constructor(private readonly buffer: Buffer) {}

  string(what: string): Buffer {
    if (this.buffer.length - this.offset < 4) malformed(`it ends before the ${what}`);
    const length = this.buffer.readUInt32BE(this.offset);
    this.offset += 4;
    if (length > this.buffer.length - this.offset) malformed(`the ${what} is truncated`);
    const value = this.buffer.subarray(this.offset, this.offset + length);
    this.offset += length;
    return value;
  }

  /** Returns the magnitude without the sign byte; refuses encodings that would give one key two fingerprints. */
  positiveMpint(what: string): Buffer {
    const raw = this.string(what);
    if (raw.length === 0) malformed(`the ${what} is zero`);
    if (raw.length > MAX_RSA_BITS / 8 + 1) malformed(`the ${what} is too large`);
    if ((raw[0]! & 0x80) !== 0) malformed(`the ${what} is negative`);
    if (raw[0] === 0) {
      if (raw.length === 1 || (raw[1]! & 0x80) === 0) malformed(`the ${what} is not minimally encoded`);
      return raw.subarray(1);
    }
    return raw;
  }

  end(): void {
    if (this.offset !== this.buffer.length) malformed('it has unexpected trailing bytes');
  }
}

/** Validates the wire-format blob for `label` and returns the key size in bits as ssh-keygen reports it. */
function parseBlob(label: string, blob: Buffer): number {
  const reader = new WireReader(blob);
  const innerType = reader.string('key type').toString('latin1');
  if (innerType !== label) {
    const shown = /^[\x21-\x7e]{1,64}$/.test(innerType) ? `"${innerType}"` : 'a different type';
    fail(`The key data is for ${shown} but the line says "${label}".`);
  }

  if (label === 'ssh-rsa') return parseRsa(reader);
  if (label === 'ssh-ed25519') {
    const key = reader.string('Ed25519 key');
    reader.end();
    if (key.length !== 32) malformed('an Ed25519 key must be exactly 32 bytes');
    importJwk({ kty: 'OKP', crv: 'Ed25519', x: key.toString('base64url') }, 'Ed25519');
    return 256;
  }
  const curve = ECDSA_CURVES.get(label);
  if (curve === undefined) fail(`Unsupported SSH key type "${label}". ${ACCEPTED}`);
  return parseEcdsa(reader, curve);
}

function parseRsa(reader: WireReader): number {
  const e = reader.positiveMpint('RSA exponent');
  const n = reader.positiveMpint('RSA modulus');
  reader.end();
  // OpenSSL and common SSH implementations only handle odd exponents up to 64 bits; anything else is forged.
  if (e.length > 8 || (e[e.length - 1]! & 1) === 0 || (e.length === 1 && e[0]! < 3)) {
    malformed('the RSA exponent is not valid');
  }
  if ((n[n.length - 1]! & 1) === 0) malformed('the RSA modulus is even');
  const bits = (n.length - 1) * 8 + (32 - Math.clz32(n[0]!));
  if (bits < MIN_RSA_BITS) {
    fail(
      `RSA keys must be at least ${MIN_RSA_BITS} bits; this one has ${bits}. Consider ssh-keygen -t ed25519.`,
    );
  }
  importJwk({ kty: 'RSA', n: n.toString('base64url'), e: e.toString('base64url') }, 'RSA');
  return bits;
}

function parseEcdsa(reader: WireReader, curve: EcdsaCurve): number {
  const curveId = reader.string('curve name').toString('latin1');
  const point = reader.string('public point');
  reader.end();
  if (curveId !== curve.curveId) malformed(`the curve "${curve.curveId}" was expected`);
  const size = curve.coordinateBytes;
  if (point.length !== 1 + 2 * size || point[0] !== 0x04) {
    malformed('the ECDSA public point must be an uncompressed point');
  }
  importJwk(
    {
      kty: 'EC',
      crv: curve.jwkCurve,
      x: point.subarray(1, 1 + size).toString('base64url'),
      y: point.subarray(1 + size).toString('base64url'),
    },
    'ECDSA',
  );
  return curve.bits;
}

// OpenSSL rejects points off the curve and other impossible values; our own checks do not cover all of that.
function importJwk(jwk: JsonWebKey, what: string): void {
  try {
    createPublicKey({ key: jwk, format: 'jwk' });
  } catch {
    malformed(`it is not a valid ${what} public key`);
  }
}
