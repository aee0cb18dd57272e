// Online DNSSEC as validators see it: delv with a trust anchor built from the zone's DS prints
// "; fully validated" for every type and "; negative response, fully validated" for NXDOMAIN and
// NODATA (compact denial), and fails with a tampered anchor; drill -S chases with the key.
import { createSocket } from 'node:dgram';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsServer, type DnsServer } from '../../src/areas/dns/server/index.js';
import { scratchDir } from '../helpers/scratch-dir.js';
import {
  dig,
  exampleZone,
  MemoryStatsSink,
  MemoryZoneSource,
  run,
  signingKey,
  testKernel,
} from './dns-fixtures.js';

const APEX = 'signed.test';
const key = signingKey(APEX);
let server: DnsServer;
let port: number;
const dir = scratchDir('fjord-dnssec-');

function anchorFile(ds: string, name: string): string {
  const [tag, alg, digestType, digest] = ds.split(' ');
  const path = join(dir, name);
  writeFileSync(path, `trust-anchors {\n  ${APEX}. static-ds ${tag} ${alg} ${digestType} "${digest}";\n};\n`);
  return path;
}

async function delv(anchor: string, name: string, type: string): Promise<string> {
  const { stdout, stderr } = await run('delv', [
    '@127.0.0.1',
    '-p',
    String(port),
    '-a',
    anchor,
    `+root=${APEX}`,
    name,
    type,
  ]);
  return stdout + stderr;
}

beforeAll(async () => {
  const source = new MemoryZoneSource();
  source.put(exampleZone(APEX, key.key));
  [server] = createDnsServer(testKernel(), source, new MemoryStatsSink()) as [DnsServer];
  await server.start();
  port = server.port()!;
});

afterAll(async () => {
  await server?.stop();
});

describe('delv validates every answer from the DS', () => {
  it.each([
    [APEX, 'A'],
    [APEX, 'AAAA'],
    [APEX, 'MX'],
    [APEX, 'TXT'],
    [APEX, 'CAA'],
    [APEX, 'NS'],
    [APEX, 'SOA'],
    [APEX, 'DNSKEY'],
    [`_sip._tcp.${APEX}`, 'SRV'],
    [`ptr.${APEX}`, 'PTR'],
    [`www.${APEX}`, 'CNAME'],
    [`www.${APEX}`, 'A'],
    [`c1.${APEX}`, 'AAAA'],
    [`x.wild.${APEX}`, 'A'],
    [`many.${APEX}`, 'A'],
    [`LoNg.${APEX}`, 'TXT'],
  ])('%s %s: fully validated', async (name, type) => {
    const out = await delv(anchorFile(key.ds, 'good.conf'), name, type);
    expect(out).toMatch(/^; fully validated$/m);
    expect(out).toMatch(
      new RegExp(`\\sRRSIG\\s+${type === 'A' && name.startsWith('www') ? 'CNAME' : type} 13 `),
    );
  });

  it.each([
    [`nope.${APEX}`, 'A'], // NXDOMAIN, as a black lie
    [`deep.nope.${APEX}`, 'TXT'],
    [`web.${APEX}`, 'MX'], // NODATA
    [`b.ent.${APEX}`, 'A'], // empty non-terminal
    [`x.wild.${APEX}`, 'MX'], // NODATA at a wildcard expansion
    [APEX, 'SRV'],
  ])('%s %s: negative response, fully validated', async (name, type) => {
    const out = await delv(anchorFile(key.ds, 'good.conf'), name, type);
    expect(out).toMatch(/^; negative response, fully validated$/m);
  });

  it('fails validation with a tampered anchor', async () => {
    const [tag, alg, dt, digest] = key.ds.split(' ');
    const flipped = `${digest!.slice(0, -1)}${digest!.endsWith('0') ? '1' : '0'}`;
    const bad = anchorFile(`${tag} ${alg} ${dt} ${flipped}`, 'bad.conf');
    for (const [name, type] of [
      [APEX, 'A'],
      [`nope.${APEX}`, 'A'],
    ] as const) {
      const out = await delv(bad, name, type);
      expect(out).not.toMatch(/fully validated/);
      expect(out).toMatch(/resolution failed|no valid/);
    }
  });

  it('fails validation with another key of the same tag shape', async () => {
    const other = signingKey(APEX);
    const out = await delv(anchorFile(other.ds, 'other.conf'), APEX, 'A');
    expect(out).not.toMatch(/fully validated/);
  });
});

describe('compact denial of existence (RFC 9824)', () => {
  it('turns NXDOMAIN into NODATA with an NSEC to \\000.<qname> that lists NXNAME', async () => {
    const out = await dig(port, `nope.${APEX}`, 'A', '+dnssec');
    expect(out).toMatch(/status: NOERROR/);
    expect(out).toMatch(
      /nope\.signed\.test\.\s+60\s+IN\s+NSEC\s+\\000\.nope\.signed\.test\. RRSIG NSEC TYPE128/,
    );
    expect(out).toMatch(/signed\.test\.\s+60\s+IN\s+SOA/);
    // without DO the rcode stays NXDOMAIN and nothing is signed
    const plain = await dig(port, `nope.${APEX}`, 'A');
    expect(plain).toMatch(/status: NXDOMAIN/);
    expect(plain).not.toMatch(/RRSIG|NSEC/);
  });

  it('keeps the NXDOMAIN rcode for clients that set Compact Answers OK (CO)', async () => {
    // dig 9.18 cannot set CO: send the query by hand, DO (0x8000) and CO (0x4000) set
    const query = dnsPacket.encode({
      type: 'query',
      id: 99,
      questions: [{ type: 'A', name: `nope.${APEX}` }],
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: 0xc000 } as never],
    });
    const socket = createSocket('udp4');
    const reply = await new Promise<Buffer>((resolve) => {
      socket.once('message', resolve);
      socket.send(query, port, '127.0.0.1');
    });
    socket.close();
    const decoded = dnsPacket.decode(reply);
    expect(reply[3]! & 0xf).toBe(3); // NXDOMAIN
    expect(decoded.authorities?.map((r) => r.type)).toEqual(['SOA', 'RRSIG', 'NSEC', 'RRSIG']);
    const opt = decoded.additionals?.find((r) => r.type === 'OPT') as unknown as { flags: number };
    expect(opt.flags & 0xc000).toBe(0xc000); // DO and CO echoed
  });

  it('lists the types that exist in a NODATA NSEC', async () => {
    const out = await dig(port, `web.${APEX}`, 'MX', '+dnssec');
    expect(out).toMatch(
      /web\.signed\.test\.\s+60\s+IN\s+NSEC\s+\\000\.web\.signed\.test\. A AAAA RRSIG NSEC/,
    );
  });

  it('proves a delegation insecure with an NSEC at the cut without DS', async () => {
    const out = await dig(port, `www.deleg.${APEX}`, 'A', '+dnssec', '+norec');
    expect(out).toMatch(
      /deleg\.signed\.test\.\s+60\s+IN\s+NSEC\s+\\000\.deleg\.signed\.test\. NS RRSIG NSEC/,
    );
    expect(out).not.toMatch(/IN\s+RRSIG\s+NS /); // NS at a cut is not signed
    const ds = await dig(port, `deleg.${APEX}`, 'DS', '+dnssec');
    expect(ds).toMatch(/flags: qr aa/);
    expect(ds).toMatch(/IN\s+NSEC\s+\\000\.deleg\.signed\.test\. NS RRSIG NSEC/);
  });

  it('writes signatures as 64-byte r‖s with inception set back and a week of validity', async () => {
    const out = await dig(port, APEX, 'A', '+dnssec', '+noall', '+answer', '+nosplit');
    const sig = out
      .split('\n')
      .find((l) => /\sRRSIG\s/.test(l))!
      .split(/\s+/);
    const [expiration, inception] = [sig[8]!, sig[9]!].map((t) =>
      Date.UTC(+t.slice(0, 4), +t.slice(4, 6) - 1, +t.slice(6, 8), +t.slice(8, 10), +t.slice(10, 12)),
    );
    expect(Buffer.from(sig[12]!, 'base64')).toHaveLength(64);
    expect(inception!).toBeLessThanOrEqual(Date.now() - 3600_000);
    expect(expiration! - Date.now()).toBeGreaterThan(6.9 * 86400_000);
    expect(Number(sig[10])).toBe(key.key.keyTag);
  });
});

describe('drill -S chases signatures to the zone key', () => {
  it.each([
    [APEX, 'SOA'],
    [`www.${APEX}`, 'A'],
    [`nope.${APEX}`, 'A'],
    [`web.${APEX}`, 'MX'],
  ])('%s %s', async (name, type) => {
    const keyFile = join(dir, 'zone.key');
    writeFileSync(
      keyFile,
      `${APEX}. 3600 IN DNSKEY 257 3 13 ${key.dnskeyRdata.subarray(4).toString('base64')}\n`,
    );
    const { stdout } = await run('drill', [
      '-S',
      '-k',
      keyFile,
      '-p',
      String(port),
      '@127.0.0.1',
      name,
      type,
    ]);
    expect(stdout).toMatch(/;; Chase successful/);
    expect(stdout).not.toMatch(/Bogus|No trusted keys/i);
  });
});
