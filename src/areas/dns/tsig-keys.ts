/**
 * The operator's TSIG keys (RFC 8945), managed as PowerDNS manages them (`name`, `algorithm`,
 * `key` in base64): a key signs zone transfers and NOTIFY between Fjord and its secondaries.
 * The secret is returned once, when the key is made (generated when none is given); it is kept
 * sealed with the data key because the server needs it back to sign. A key may be limited to
 * some zones, and may name the secondaries that get NOTIFY signed with it.
 */
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import { AppError, kernelErrors } from '../../kernel/errors.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { SecretBox } from '../../kernel/secrets.js';
import { insertUnique } from '../../kernel/store/dialect.js';
import type { Units } from '../../kernel/store/unit-of-work.js';
import type { DnsTsigKeysTable } from './migrations.js';
import { toAscii } from './names.js';
import { dnsErrors } from './record-changes.js';
import type { TsigKeyRepo } from './repo.js';
import { type ServedTsigKey, TSIG_ALGORITHM_NAMES, type TsigAlgorithmName } from './server-contract.js';

/** Digest sizes: a generated secret is as long as the digest, a given one at least half of it (RFC 8945 §6). */
const DIGEST_BYTES: Record<TsigAlgorithmName, number> = {
  'hmac-sha1': 20,
  'hmac-sha224': 28,
  'hmac-sha256': 32,
  'hmac-sha384': 48,
  'hmac-sha512': 64,
};

export interface TsigKeyView {
  name: string;
  algorithm: TsigAlgorithmName;
  /** Base64 of the secret: only in the answer that made the key. */
  key?: string;
  zones: string[] | null;
  notify: string[];
  created_at: string;
}

export interface CreateTsigKey {
  name: string;
  algorithm?: string;
  key?: string;
  zones?: string[] | null;
  notify?: string[];
}

export const tsigErrors = {
  invalid: (path: string, message: string) =>
    new AppError('invalid', 'invalid_tsig_key', `${path.replace('/body/', '')}: ${message}.`, {
      errors: [{ path, message }],
    }),
  exists: () => new AppError('conflict', 'tsig_key_exists', 'A TSIG key of this name exists.'),
  notFound: () => kernelErrors.notFound('TSIG key'),
};

export class TsigKeyService {
  constructor(
    private readonly data: Units<TsigKeyRepo>,
    private readonly deps: {
      secrets: SecretBox;
      clock: Clock;
      limits: Limits;
      log: Logger;
      /** Tells every DNS process to reload its keys. */
      announce: () => Promise<void>;
    },
  ) {}

  async create(body: CreateTsigKey): Promise<TsigKeyView> {
    const name = keyName(body.name, '/body/name');
    const algorithm = (body.algorithm ?? 'hmac-sha256').toLowerCase().replace(/\.$/, '');
    if (!(TSIG_ALGORITHM_NAMES as readonly string[]).includes(algorithm))
      throw tsigErrors.invalid('/body/algorithm', `one of ${TSIG_ALGORITHM_NAMES.join(', ')}`);
    const alg = algorithm as TsigAlgorithmName;
    const secret = body.key === undefined ? randomBytes(DIGEST_BYTES[alg]) : decodeSecret(body.key, alg);
    const zones =
      body.zones == null ? null : [...new Set(body.zones.map((z, i) => keyName(z, `/body/zones/${i}`)))];
    const notify = (body.notify ?? []).map((t, i) => notifyTarget(t, `/body/notify/${i}`));
    const max = this.deps.limits.of('dns.tsig_keys');
    const row: DnsTsigKeysTable = {
      name,
      algorithm: alg,
      secret_sealed: this.deps.secrets.seal(secret.toString('base64')),
      zones: zones === null ? null : JSON.stringify(zones),
      notify: JSON.stringify(notify),
      created_at: this.deps.clock.nowMs(),
    };
    await this.data.run(['dns:tsig-keys'], async (tx) => {
      if (max !== null && (await tx.all()).length >= max)
        throw dnsErrors.quota(`At most ${max} TSIG keys can be held.`);
      await insertUnique(() => tx.insert(row), tsigErrors.exists);
    });
    this.deps.log.info({ key: name, algorithm: alg }, 'dns: TSIG key created');
    await this.deps.announce();
    return { ...view(row), key: secret.toString('base64') };
  }

  async list(): Promise<{ keys: TsigKeyView[] }> {
    return { keys: (await this.data.read.all()).map(view) };
  }

  async get(name: string): Promise<TsigKeyView> {
    const row = await this.data.read.byName(keyName(name, '/params/name'));
    if (!row) throw tsigErrors.notFound();
    return view(row);
  }

  async delete(name: string): Promise<{ success: true; message: string }> {
    if (!(await this.data.read.delete(keyName(name, '/params/name')))) throw tsigErrors.notFound();
    this.deps.log.info({ key: name }, 'dns: TSIG key deleted');
    await this.deps.announce();
    return { success: true, message: 'TSIG key deleted.' };
  }

  /** Every key with its secret, for the DNS server. */
  async served(): Promise<ServedTsigKey[]> {
    return (await this.data.read.all()).map((r) => ({
      name: r.name,
      algorithm: r.algorithm as TsigAlgorithmName,
      secret: Buffer.from(this.deps.secrets.open(r.secret_sealed), 'base64'),
      zones: r.zones === null ? null : (JSON.parse(r.zones) as string[]),
      notify: JSON.parse(r.notify) as string[],
    }));
  }
}

function view(r: DnsTsigKeysTable): TsigKeyView {
  return {
    name: r.name,
    algorithm: r.algorithm as TsigAlgorithmName,
    zones: r.zones === null ? null : (JSON.parse(r.zones) as string[]),
    notify: JSON.parse(r.notify) as string[],
    created_at: new Date(Number(r.created_at)).toISOString(),
  };
}

/** A key or zone name: lowercase ASCII, no trailing dot, labels of letters, digits, `-` and `_`. */
function keyName(raw: string, path: string): string {
  let name: string;
  try {
    name = toAscii(raw.trim().replace(/\.$/, '')).toLowerCase();
  } catch {
    throw tsigErrors.invalid(path, 'not a domain name');
  }
  const labels = name.split('.');
  if (
    name.length === 0 ||
    name.length > 253 ||
    labels.some((l) => !/^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/.test(l))
  )
    throw tsigErrors.invalid(path, 'not a domain name');
  return name;
}

function decodeSecret(raw: string, algorithm: TsigAlgorithmName): Buffer {
  const clean = raw.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(clean) || clean.length % 4 !== 0)
    throw tsigErrors.invalid('/body/key', 'not base64');
  const secret = Buffer.from(clean, 'base64');
  const min = DIGEST_BYTES[algorithm] / 2;
  // The schema bounds the length from above (1024 base64 characters).
  if (secret.length < min) throw tsigErrors.invalid('/body/key', `at least ${min} bytes for ${algorithm}`);
  return secret;
}

/** `ip:port` or `[ipv6]:port`: an address, never a name, so NOTIFY never waits on a lookup. */
function notifyTarget(raw: string, path: string): string {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|(\d{1,3}(?:\.\d{1,3}){3}))(?::(\d{1,5}))?$/.exec(raw.trim());
  const host = m?.[1] ?? m?.[2];
  const port = m?.[3] === undefined ? 53 : Number(m[3]);
  if (!host || isIP(host) === 0 || port < 1 || port > 65535)
    throw tsigErrors.invalid(path, 'an address and port, `192.0.2.1:53` or `[2001:db8::1]:53`');
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}
