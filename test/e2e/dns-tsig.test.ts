// TSIG (RFC 8945) as dig and Knot see it: signed queries and transfers (several messages, each
// signed), BADKEY/BADSIG/BADTIME, a key limited to some zones, and Knot (Debian's knotd) as a
// secondary that transfers with the right key, is refused with a wrong one, and follows a
// signed NOTIFY. knotd runs on loopback on a free port, with its own temporary config and storage.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsServer, type DnsServer } from '../../src/areas/dns/server/index.js';
import { sign } from '../../src/areas/dns/server/tsig.js';
import { parseQuery } from '../../src/areas/dns/server/wire-reader.js';
import type { ServedRecord, ServedTsigKey } from '../../src/areas/dns/server-contract.js';
import { dig, exampleZone, MemoryStatsSink, MemoryZoneSource, run, testKernel } from './dns-fixtures.js';

const secret = randomBytes(32);
const otherSecret = randomBytes(32);
const key = (name: string, s: Buffer, extra: Partial<ServedTsigKey> = {}): ServedTsigKey => ({
  name,
  algorithm: 'hmac-sha256',
  secret: s,
  zones: null,
  notify: [],
  ...extra,
});
const source = new MemoryZoneSource();
const dir = mkdtempSync(join(tmpdir(), 'fjord-tsig-'));
let server: DnsServer;
let port: number;
let knotPort: number;
let knot: ChildProcess | null = null;

/** A zone big enough to need several transfer messages. */
function bigZone() {
  const zone = exampleZone('big.test');
  const extra: ServedRecord[] = [];
  for (let i = 0; i < 3000; i++)
    extra.push({
      name: `host${i}.big.test`,
      ttl: 300,
      data: { type: 'A', address: `10.0.${i >> 8}.${i & 255}` },
    });
  return { ...zone, records: [...zone.records, ...extra] };
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const p = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return p;
}

const b64 = (b: Buffer) => b.toString('base64');
const status = (out: string) => /status: (\w+)/.exec(out)?.[1];

beforeAll(async () => {
  knotPort = await freePort();
  source.put(exampleZone());
  source.put(bigZone());
  source.put(exampleZone('only.test'));
  source.tsigKeys = [
    key('xfr.fjord', secret, { notify: [`127.0.0.1:${knotPort}`], zones: ['example.test', 'big.test'] }),
    // Knot holds this name with another secret: its transfers of big.test must fail (BADSIG).
    key('other.fjord', otherSecret, { zones: ['big.test'] }),
    key('sha1.fjord', secret.subarray(0, 20), { algorithm: 'hmac-sha1' }),
    key('sha512.fjord', Buffer.concat([secret, secret]), { algorithm: 'hmac-sha512' }),
  ];
  // No address may transfer unsigned (FJORD_DNS_AXFR_ALLOW unset): keys alone open transfers.
  [server] = createDnsServer(testKernel(), source, new MemoryStatsSink()) as [DnsServer];
  await server.start();
  port = server.port()!;
});

afterAll(async () => {
  if (knot && knot.exitCode === null) {
    const exited = new Promise((resolve) => knot!.once('exit', resolve));
    knot.kill('SIGTERM');
    await exited;
  }
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('signed queries and transfers (dig)', () => {
  it('transfers a zone to dig -y, every message signed and verified', async () => {
    const out = await dig(port, '-y', `hmac-sha256:xfr.fjord:${b64(secret)}`, 'big.test', 'AXFR');
    expect(out).not.toMatch(/failed|failure|Transfer failed/i);
    expect(out).toMatch(/host2999\.big\.test\.\s+300\s+IN\s+A\s+10\.0\.11\.183/);
    const messages = Number(/XFR size: \d+ records \(messages (\d+)/.exec(out)?.[1]);
    expect(messages).toBeGreaterThan(1);
    for (const alg of ['hmac-sha1:sha1.fjord', 'hmac-sha512:sha512.fjord']) {
      const s = alg.startsWith('hmac-sha1') ? secret.subarray(0, 20) : Buffer.concat([secret, secret]);
      const small = await dig(port, '-y', `${alg}:${b64(s)}`, 'example.test', 'AXFR');
      expect(small).toMatch(/XFR size: \d+ records/);
      expect(small).not.toMatch(/failure|failed/i);
    }
  });

  it('refuses an unsigned transfer, and one signed with a key that does not cover the zone', async () => {
    expect(await dig(port, 'example.test', 'AXFR')).toMatch(/Transfer failed/);
    const out = await dig(port, '-y', `hmac-sha256:other.fjord:${b64(otherSecret)}`, 'only.test', 'AXFR');
    expect(out).toMatch(/Transfer failed/);
    // The refusal itself is signed: dig verified it and reports no TSIG failure.
    expect(out).not.toMatch(/tsig verify failure/i);
  });

  it('signs the answer to a signed query', async () => {
    const out = await dig(port, '-y', `hmac-sha256:xfr.fjord:${b64(secret)}`, 'example.test', 'SOA');
    expect(status(out)).toBe('NOERROR');
    expect(out).toMatch(
      /xfr\.fjord\.\s+0\s+ANY\s+TSIG\s+hmac-sha256\.\s+\d+\s+300\s+32\s+\S+\s+\d+\s+NOERROR/,
    );
    expect(out).not.toMatch(/failure/i);
  });

  it('answers an unknown key NOTAUTH/BADKEY and a wrong secret NOTAUTH/BADSIG, unsigned', async () => {
    const unknown = await dig(port, '-y', `hmac-sha256:nobody.fjord:${b64(secret)}`, 'example.test', 'SOA');
    expect(status(unknown)).toBe('NOTAUTH');
    expect(unknown).toMatch(/TSIG\s+hmac-sha256\.\s+\d+\s+\d+\s+0\s+\d+\s+BADKEY/);
    const wrong = await dig(port, '-y', `hmac-sha256:xfr.fjord:${b64(otherSecret)}`, 'example.test', 'SOA');
    expect(status(wrong)).toBe('NOTAUTH');
    expect(wrong).toMatch(/TSIG\s+hmac-sha256\.\s+\d+\s+\d+\s+0\s+\d+\s+BADSIG/);
    // The algorithm is part of the key: the right name with another algorithm is BADKEY.
    const alg = await dig(port, '-y', `hmac-sha512:xfr.fjord:${b64(secret)}`, 'example.test', 'SOA');
    expect(alg).toMatch(/BADKEY/);
  });

  it('answers a query signed outside the fudge NOTAUTH/BADTIME, signed, with its own time', async () => {
    const q = Buffer.from(
      'abcd00000001000000000000076578616d706c65047465737400000600 01'.replace(/ /g, ''),
      'hex',
    );
    const xfr = source.tsigKeys[0]!;
    const stale = Math.floor(Date.now() / 1000) - 3600;
    const { message, mac } = sign(q, xfr, stale);
    const socket = createSocket('udp4');
    const reply = await new Promise<Buffer>((resolve) => {
      socket.once('message', resolve);
      socket.send(message, port, '127.0.0.1');
    });
    socket.close();
    expect(reply[3]! & 0x0f).toBe(9); // NOTAUTH
    // Verify the answer as a client would: its MAC covers our request's MAC (RFC 8945 §5.3).
    const asQuery = Buffer.from(reply);
    asQuery[2] = asQuery[2]! & 0x7f; // read it with the query parser
    const parsed = parseQuery(asQuery)!;
    expect(parsed.tsig!.error).toBe(18); // BADTIME
    expect(parsed.tsig!.timeSigned).toBe(stale);
    expect(Math.abs(parsed.tsig!.other.readUIntBE(0, 6) - Date.now() / 1000)).toBeLessThan(60);
    // The answer as it was before its TSIG record: ARCOUNT one less.
    const unsigned = Buffer.from(reply.subarray(0, parsed.tsig!.start));
    unsigned.writeUInt16BE(unsigned.readUInt16BE(10) - 1, 10);
    const resigned = sign(unsigned, xfr, stale, {
      previousMac: mac,
      error: 18,
      other: parsed.tsig!.other,
      timeSigned: stale,
    });
    expect(resigned.mac.equals(parsed.tsig!.mac)).toBe(true);
  });
});

describe('Knot as a secondary', () => {
  const log = join(dir, 'knot.log');
  const soaSerial = async (zone: string) => {
    const { stdout } = await run('kdig', [
      '@127.0.0.1',
      '-p',
      String(knotPort),
      '+short',
      '+timeout=1',
      zone,
      'SOA',
    ]);
    return stdout.trim().split(/\s+/)[2] ?? null;
  };
  const until = async (what: () => Promise<boolean>, label: string) => {
    for (let i = 0; i < 200; i++) {
      if (await what()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${label}; knot log:\n${readFileSync(log, 'utf8')}`);
  };

  beforeAll(async () => {
    const root = process.getuid?.() === 0;
    writeFileSync(
      join(dir, 'knot.conf'),
      [
        'server:',
        `    rundir: "${dir}"`,
        `    listen: 127.0.0.1@${knotPort}`,
        // As root, knotd drops to nobody once its socket is bound: it never runs privileged.
        ...(root ? ['    user: nobody:nogroup'] : []),
        'log:',
        `  - target: "${log}"`,
        '    any: info',
        'database:',
        `    storage: "${dir}"`,
        'key:',
        '  - id: xfr.fjord',
        '    algorithm: hmac-sha256',
        `    secret: ${b64(secret)}`,
        '  - id: other.fjord',
        '    algorithm: hmac-sha256',
        `    secret: ${b64(randomBytes(32))}`,
        'remote:',
        '  - id: fjord',
        `    address: 127.0.0.1@${port}`,
        '    key: xfr.fjord',
        '  - id: fjord-wrong-key',
        `    address: 127.0.0.1@${port}`,
        '    key: other.fjord',
        'acl:',
        '  - id: notify-from-fjord',
        '    address: 127.0.0.1',
        '    key: xfr.fjord',
        '    action: notify',
        'template:',
        '  - id: default',
        `    storage: "${dir}"`,
        '    zonefile-sync: -1',
        '    zonefile-load: none',
        '    journal-content: none',
        'zone:',
        '  - domain: example.test',
        '    master: fjord',
        '    acl: notify-from-fjord',
        '  - domain: big.test',
        '    master: fjord-wrong-key',
        '',
      ].join('\n'),
    );
    writeFileSync(log, '');
    if (root) {
      chownSync(dir, 65534, 65534);
      chownSync(log, 65534, 65534);
      chmodSync(dir, 0o700);
    }
    knot = spawn(
      existsSync('/usr/sbin/knotd') ? '/usr/sbin/knotd' : 'knotd',
      ['-c', join(dir, 'knot.conf')],
      { stdio: 'ignore' },
    );
  });

  it('transfers a zone signed with the right key, and is refused with a wrong one', async () => {
    await until(async () => (await soaSerial('example.test')) === '2026112201', 'the signed transfer');
    const { stdout } = await run('kdig', [
      '@127.0.0.1',
      '-p',
      String(knotPort),
      '+short',
      'web.example.test',
      'A',
    ]);
    expect(stdout.trim()).toBe('192.0.2.80');
    await until(
      async () => /\[big\.test\.\] refresh, .*failed to verify TSIG/.test(readFileSync(log, 'utf8')),
      'the refused transfer',
    );
    expect(await soaSerial('big.test')).not.toBe('2026112201');
  });

  it('follows a signed NOTIFY to the new serial', async () => {
    const zone = exampleZone();
    source.put({ ...zone, soa: { ...zone.soa, serial: 2026112202 } });
    await until(async () => (await soaSerial('example.test')) === '2026112202', 'the NOTIFY-driven transfer');
    expect(readFileSync(log, 'utf8')).toMatch(/\[example\.test\.\] notify, incoming/);
  });
});
