import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

/**
 * A PostgreSQL SCRAM-SHA-256 password verifier (RFC 5802/7677, as `pg_authid` stores it),
 * computed here so that `CREATE/ALTER ROLE … PASSWORD` never carries the password itself: the
 * server logs a failing statement whole, and an external server may log every DDL statement.
 * Fjord's passwords are ASCII letters and digits, which SASLprep leaves as they are.
 */
export function scramVerifier(password: string, iterations = 4096): string {
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest();
  const storedKey = createHash('sha256').update(hmac(salted, 'Client Key')).digest();
  const serverKey = hmac(salted, 'Server Key');
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}
