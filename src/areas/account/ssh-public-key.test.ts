import { execFileSync, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSshPublicKey, SshKeyFormatError } from './ssh-public-key.js';

const hasSshKeygen = spawnSync('ssh-keygen', ['-?'], { stdio: 'ignore' }).error === undefined;

const workDir = mkdtempSync(join(tmpdir(), 'fjord-ssh-key-test-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

// ---- hand-built SSH wire format, independent of the code under test ----

function sshString(value: Buffer | string): Buffer {
  const body = typeof value === 'string' ? Buffer.from(value) : value;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  return Buffer.concat([length, body]);
}

function mpint(magnitude: Buffer): Buffer {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const trimmed = magnitude.subarray(start);
  return sshString((trimmed[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

function keyLine(type: string, blob: Buffer, comment?: string): string {
  return `${type} ${blob.toString('base64')}${comment === undefined ? '' : ` ${comment}`}`;
}

function rsaBlob(modulusLength: number): Buffer {
  const jwk = generateKeyPairSync('rsa', { modulusLength }).publicKey.export({ format: 'jwk' });
  return Buffer.concat([
    sshString('ssh-rsa'),
    mpint(Buffer.from(jwk.e!, 'base64url')),
    mpint(Buffer.from(jwk.n!, 'base64url')),
  ]);
}

function ed25519Blob(): Buffer {
  const jwk = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
  return Buffer.concat([sshString('ssh-ed25519'), sshString(Buffer.from(jwk.x!, 'base64url'))]);
}

function ecdsaPoint(bits: 256 | 384 | 521): Buffer {
  const jwk = generateKeyPairSync('ec', { namedCurve: `P-${bits}` }).publicKey.export({ format: 'jwk' });
  return Buffer.concat([
    Buffer.from([4]),
    Buffer.from(jwk.x!, 'base64url'),
    Buffer.from(jwk.y!, 'base64url'),
  ]);
}

function ecdsaBlob(bits: 256 | 384 | 521, point = ecdsaPoint(bits)): Buffer {
  return Buffer.concat([sshString(`ecdsa-sha2-nistp${bits}`), sshString(`nistp${bits}`), sshString(point)]);
}

function refusal(input: string): SshKeyFormatError {
  try {
    parseSshPublicKey(input);
  } catch (err) {
    expect(err).toBeInstanceOf(SshKeyFormatError);
    return err as SshKeyFormatError;
  }
  throw new Error(`expected a refusal for: ${input.slice(0, 80)}`);
}

// ---- ssh-keygen as the reference ----

const SSH_KEYGEN_TYPE: Record<string, string> = {
  'ssh-rsa': 'RSA',
  'ssh-ed25519': 'ED25519',
  'ecdsa-sha2-nistp256': 'ECDSA',
  'ecdsa-sha2-nistp384': 'ECDSA',
  'ecdsa-sha2-nistp521': 'ECDSA',
};

function sshKeygenFingerprint(pubFile: string): {
  bits: number;
  fingerprint: string;
  comment: string;
  type: string;
} {
  const out = execFileSync('ssh-keygen', ['-lf', pubFile], { encoding: 'utf8' }).trim();
  const match = /^(\d+) (SHA256:[A-Za-z0-9+/]+) (.*) \(([A-Z0-9-]+)\)$/.exec(out);
  if (match === null) throw new Error(`unexpected ssh-keygen output: ${out}`);
  return { bits: Number(match[1]), fingerprint: match[2]!, comment: match[3]!, type: match[4]! };
}

const generated = [
  {
    name: 'rsa-2048',
    args: ['-t', 'rsa', '-b', '2048'],
    keyType: 'ssh-rsa',
    bits: 2048,
    comment: 'alice@laptop',
  },
  { name: 'ed25519', args: ['-t', 'ed25519'], keyType: 'ssh-ed25519', bits: 256, comment: 'bob laptop key' },
  {
    name: 'ecdsa-256',
    args: ['-t', 'ecdsa', '-b', '256'],
    keyType: 'ecdsa-sha2-nistp256',
    bits: 256,
    comment: 'c',
  },
  {
    name: 'ecdsa-384',
    args: ['-t', 'ecdsa', '-b', '384'],
    keyType: 'ecdsa-sha2-nistp384',
    bits: 384,
    comment: 'd',
  },
  {
    name: 'ecdsa-521',
    args: ['-t', 'ecdsa', '-b', '521'],
    keyType: 'ecdsa-sha2-nistp521',
    bits: 521,
    comment: 'e',
  },
];

describe('parseSshPublicKey with keys from ssh-keygen', () => {
  it.skipIf(!hasSshKeygen).each(generated)('$name agrees with ssh-keygen -lf', (c) => {
    const file = join(workDir, c.name);
    execFileSync('ssh-keygen', [...c.args, '-N', '', '-q', '-C', c.comment, '-f', file]);
    const pubText = readFileSync(`${file}.pub`, 'utf8');
    const reference = sshKeygenFingerprint(`${file}.pub`);

    const parsed = parseSshPublicKey(pubText);
    expect(parsed.fingerprint).toBe(reference.fingerprint);
    expect(parsed.bits).toBe(reference.bits);
    expect(parsed.bits).toBe(c.bits);
    expect(SSH_KEYGEN_TYPE[parsed.keyType]).toBe(reference.type);
    expect(parsed.keyType).toBe(c.keyType);
    expect(parsed.comment).toBe(reference.comment);
    expect(parsed.publicKey).toBe(pubText.trim());

    expect(refusal(readFileSync(file, 'utf8')).message).toMatch(/private key/);
  });

  it.skipIf(!hasSshKeygen)('hand-built blobs from node:crypto keys agree with ssh-keygen', () => {
    const blobs: Array<[string, Buffer]> = [
      ['ssh-rsa', rsaBlob(1024)],
      ['ssh-ed25519', ed25519Blob()],
      ['ecdsa-sha2-nistp521', ecdsaBlob(521)],
    ];
    for (const [type, blob] of blobs) {
      const parsed = parseSshPublicKey(keyLine(type, blob));
      const file = join(workDir, `hand-built-${type}.pub`);
      writeFileSync(file, `${parsed.publicKey}\n`);
      const reference = sshKeygenFingerprint(file);
      expect(parsed.fingerprint).toBe(reference.fingerprint);
      expect(parsed.bits).toBe(reference.bits);
      expect(parsed.comment).toBeNull();
    }
  });
});

describe('parseSshPublicKey normalisation', () => {
  it('tolerates surrounding whitespace, tabs and a trailing newline, and normalises them', () => {
    const blob = ed25519Blob();
    const b64 = blob.toString('base64');
    const parsed = parseSshPublicKey(`  \tssh-ed25519 \t ${b64}   my   work\tkey \r\n`);
    expect(parsed.publicKey).toBe(`ssh-ed25519 ${b64} my work key`);
    expect(parsed.comment).toBe('my work key');
    expect(parsed.keyType).toBe('ssh-ed25519');
    expect(parsed.bits).toBe(256);
    expect(parsed.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
  });

  it('returns a null comment when there is none', () => {
    const parsed = parseSshPublicKey(`${keyLine('ecdsa-sha2-nistp384', ecdsaBlob(384))}\n`);
    expect(parsed.comment).toBeNull();
    expect(parsed.bits).toBe(384);
  });

  it('accepts RSA keys of exactly 1024 bits', () => {
    expect(parseSshPublicKey(keyLine('ssh-rsa', rsaBlob(1024))).bits).toBe(1024);
  });
});

describe('parseSshPublicKey refusals', () => {
  it('refuses DSA keys', () => {
    const blob = Buffer.concat([
      sshString('ssh-dss'),
      ...[128, 20, 128, 128].map((size) => mpint(randomBytes(size))),
    ]);
    const error = refusal(keyLine('ssh-dss', blob, 'old@box'));
    expect(error.message).toMatch(/DSA/);
    expect(error.message).toMatch(/ssh-ed25519/);
  });

  it('refuses certificates and security keys', () => {
    const blob = ed25519Blob().toString('base64');
    expect(refusal(`ssh-ed25519-cert-v01@openssh.com ${blob}`).message).toMatch(/certificates/);
    expect(refusal(`ssh-rsa-cert-v01@openssh.com ${blob}`).message).toMatch(/certificates/);
    expect(refusal(`sk-ssh-ed25519@openssh.com ${blob}`).message).toMatch(/security keys/);
    expect(refusal(`ssh-ed448 ${blob}`).message).toMatch(/Unsupported SSH key type "ssh-ed448"/);
  });

  it('refuses a label that does not match the type inside the blob', () => {
    expect(refusal(keyLine('ssh-rsa', ed25519Blob())).message).toMatch(
      /"ssh-ed25519" but the line says "ssh-rsa"/,
    );
    expect(refusal(keyLine('ecdsa-sha2-nistp384', ecdsaBlob(256))).message).toMatch(/but the line says/);
  });

  it('refuses an ECDSA blob whose curve name does not match', () => {
    const point = ecdsaPoint(256);
    const blob = Buffer.concat([sshString('ecdsa-sha2-nistp256'), sshString('nistp384'), sshString(point)]);
    expect(refusal(keyLine('ecdsa-sha2-nistp256', blob)).message).toMatch(/curve/);
  });

  it('refuses truncated or non-canonical base64', () => {
    const b64 = ed25519Blob().toString('base64');
    expect(refusal(`ssh-ed25519 ${b64.slice(0, -1)}`).message).toMatch(/base64/);
    expect(refusal(`ssh-ed25519 ${b64.slice(0, -4)}`).message).toMatch(/truncated/);
    expect(refusal(`ssh-ed25519 ${b64.slice(0, 20)}!!!!`).message).toMatch(/base64/);
    // With one byte in the last group, the digit before "==" carries four unused bits that must be zero.
    const padded = Buffer.concat([ed25519Blob(), Buffer.from([0x41])]).toString('base64');
    expect(padded.slice(-3)).toBe('Q==');
    expect(refusal(`ssh-ed25519 ${padded.slice(0, -3)}R==`).message).toMatch(/base64/);
    expect(refusal('ssh-ed25519').message).toMatch(/missing/);
  });

  it('refuses trailing bytes inside the blob', () => {
    const blob = Buffer.concat([ed25519Blob(), Buffer.from([0, 0, 0, 0])]);
    expect(refusal(keyLine('ssh-ed25519', blob)).message).toMatch(/trailing bytes/);
    const rsa = Buffer.concat([rsaBlob(1024), Buffer.from([1, 2, 3])]);
    expect(refusal(keyLine('ssh-rsa', rsa)).message).toMatch(/trailing bytes/);
  });

  it('refuses an Ed25519 key of the wrong length', () => {
    const blob = Buffer.concat([sshString('ssh-ed25519'), sshString(randomBytes(31))]);
    expect(refusal(keyLine('ssh-ed25519', blob)).message).toMatch(/32 bytes/);
  });

  it('refuses RSA keys under 1024 bits', () => {
    const error = refusal(keyLine('ssh-rsa', rsaBlob(512), 'tiny'));
    expect(error.message).toMatch(/at least 1024 bits; this one has 512/);
  });

  it('refuses insane RSA numbers', () => {
    const jwk = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' });
    const n = Buffer.from(jwk.n!, 'base64url');
    const build = (e: Buffer, modulus: Buffer) =>
      keyLine('ssh-rsa', Buffer.concat([sshString('ssh-rsa'), e, modulus]));
    const goodE = mpint(Buffer.from([1, 0, 1]));
    expect(refusal(build(sshString(Buffer.from([0xff])), mpint(n))).message).toMatch(/negative/);
    expect(refusal(build(sshString(Buffer.alloc(0)), mpint(n))).message).toMatch(/zero/);
    expect(refusal(build(sshString(Buffer.from([0, 1, 0, 1])), mpint(n))).message).toMatch(/minimally/);
    expect(refusal(build(mpint(Buffer.from([2])), mpint(n))).message).toMatch(/exponent/);
    expect(refusal(build(mpint(Buffer.from([1])), mpint(n))).message).toMatch(/exponent/);
    const even = Buffer.from(n);
    even[even.length - 1]! &= 0xfe;
    expect(refusal(build(goodE, mpint(even))).message).toMatch(/even/);
  });

  it('refuses ECDSA points that are not on the curve or not uncompressed', () => {
    const point = ecdsaPoint(256);
    const offCurve = Buffer.from(point);
    offCurve[offCurve.length - 1]! ^= 1;
    expect(refusal(keyLine('ecdsa-sha2-nistp256', ecdsaBlob(256, offCurve))).message).toMatch(
      /not a valid ECDSA/,
    );
    const compressed = Buffer.concat([Buffer.from([2 + (point[64]! & 1)]), point.subarray(1, 33)]);
    expect(refusal(keyLine('ecdsa-sha2-nistp256', ecdsaBlob(256, compressed))).message).toMatch(
      /uncompressed/,
    );
    const zeros = Buffer.concat([Buffer.from([4]), Buffer.alloc(64)]);
    expect(refusal(keyLine('ecdsa-sha2-nistp256', ecdsaBlob(256, zeros))).message).toMatch(
      /not a valid ECDSA/,
    );
  });

  it('refuses empty input, several lines, private keys, PEM blocks and options prefixes', () => {
    const line = keyLine('ssh-ed25519', ed25519Blob(), 'me@host');
    expect(refusal('').message).toMatch(/empty/);
    expect(refusal(' \n\t ').message).toMatch(/empty/);
    expect(refusal(`${line}\n${line}\n`).message).toMatch(/exactly one/);

    const privatePem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' });
    expect(refusal(privatePem.toString()).message).toMatch(/private key/);
    const publicPem = generateKeyPairSync('ed25519').publicKey.export({ format: 'pem', type: 'spki' });
    expect(refusal(publicPem.toString()).message).toMatch(/PEM/);
    const rfc4716 = `---- BEGIN SSH2 PUBLIC KEY ----\nComment: "me"\n${ed25519Blob().toString('base64')}\n---- END SSH2 PUBLIC KEY ----\n`;
    expect(refusal(rfc4716).message).toMatch(/RFC 4716/);

    expect(refusal(`command="echo hi" ${line}`).message).toMatch(/options/);
    expect(refusal(`restrict,no-pty ${line}`).message).toMatch(/options/);
    expect(refusal(`no-pty ${line}`).message).toMatch(/options/);
    expect(refusal('hello world').message).toMatch(/not an OpenSSH public key/);
    expect(refusal(`${line} bell\u0007`).message).toMatch(/control characters/);
    expect(refusal(`${line} ${'x'.repeat(20_000)}`).message).toMatch(/too long/);
    expect(refusal(undefined as unknown as string)).toBeInstanceOf(SshKeyFormatError);
  });

  it('throws only SshKeyFormatError for truncated or corrupted blobs', () => {
    const samples: Array<[string, Buffer]> = [
      ['ssh-rsa', rsaBlob(1024)],
      ['ssh-ed25519', ed25519Blob()],
      ['ecdsa-sha2-nistp256', ecdsaBlob(256)],
      ['ecdsa-sha2-nistp521', ecdsaBlob(521)],
    ];
    for (const [type, blob] of samples) {
      for (let length = 0; length < blob.length; length++) {
        expect(refusal(keyLine(type, blob.subarray(0, length)))).toBeInstanceOf(SshKeyFormatError);
      }
      for (let index = 0; index < blob.length; index++) {
        for (const mask of [0x01, 0x80, 0xff]) {
          const corrupted = Buffer.from(blob);
          corrupted[index]! ^= mask;
          try {
            parseSshPublicKey(keyLine(type, corrupted));
          } catch (err) {
            expect(err).toBeInstanceOf(SshKeyFormatError);
          }
        }
      }
    }
  });
});
