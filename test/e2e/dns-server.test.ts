// The authoritative server as dig and kdig see it, serving an in-memory ZoneSource: every record
// type, negative answers with the SOA, wildcards, CNAME chains, referrals, truncation then TCP,
// AXFR, NOTIFY, REFUSED, case preservation, zone changes.
import { createSocket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsServer, type DnsServer } from '../../src/areas/dns/server/index.js';
import { dig, exampleZone, MemoryStatsSink, MemoryZoneSource, run, testKernel } from './dns-fixtures.js';

let server: DnsServer;
let port: number;
const source = new MemoryZoneSource();
const stats = new MemoryStatsSink();
const notifies: Buffer[] = [];
const secondary = createSocket('udp4');

/** Answer lines of `dig +noall +answer` as [name, ttl, type, data]. */
function lines(out: string): string[][] {
  return out
    .split('\n')
    .filter((l) => l && !l.startsWith(';'))
    .map((l) => {
      const [name, ttl, , type, ...data] = l.split(/\s+/);
      return [name!, ttl!, type!, data.join(' ')];
    });
}

const status = (out: string) => /status: (\w+)/.exec(out)?.[1];
const flags = (out: string) => /;; flags: ([\w ]+);/.exec(out)?.[1]?.split(' ') ?? [];
const section = (out: string, name: string) => {
  const m = new RegExp(`;; ${name} SECTION:\\n([\\s\\S]*?)(\\n\\n|$)`).exec(out);
  return m ? lines(m[1]!) : [];
};

beforeAll(async () => {
  await new Promise<void>((resolve) => secondary.bind(0, '127.0.0.1', resolve));
  secondary.on('message', (msg, rinfo) => {
    notifies.push(msg);
    const ack = Buffer.from(msg.subarray(0, 12));
    ack[2] = ack[2]! | 0x80;
    ack.writeUInt16BE(0, 6);
    ack.writeUInt16BE(0, 4);
    secondary.send(ack, rinfo.port, rinfo.address);
  });
  source.put(exampleZone());
  const kernel = testKernel({
    FJORD_DNS_AXFR_ALLOW: '127.0.0.0/8',
    FJORD_DNS_NOTIFY: `127.0.0.1:${secondary.address().port}`,
  });
  [server] = createDnsServer(kernel, source, stats) as [DnsServer];
  await server.start();
  port = server.port()!;
});

afterAll(async () => {
  await server?.stop();
  secondary.close();
});

describe('answers for a hosted zone', () => {
  it.each([
    ['example.test', 'A', '192.0.2.1'],
    ['example.test', 'AAAA', '2001:db8::1'],
    ['example.test', 'MX', '10 mail.example.test.'],
    ['example.test', 'TXT', '"v=spf1 -all"'],
    ['example.test', 'CAA', '0 issue "letsencrypt.org"'],
    ['example.test', 'NS', 'ns1.example.test.'],
    ['example.test', 'SOA', 'ns1.example.test. hostmaster.example.test. 2026112201 7200 3600 1209600 60'],
    ['_sip._tcp.example.test', 'SRV', '10 5 5060 web.example.test.'],
    ['ptr.example.test', 'PTR', 'host.example.org.'],
    ['long.example.test', 'TXT', `"${'a'.repeat(255)}" "${'b'.repeat(100)}"`],
  ])('%s %s', async (name, type, data) => {
    const out = await dig(port, name, type, '+norec');
    expect(status(out)).toBe('NOERROR');
    expect(flags(out)).toContain('aa');
    expect(flags(out)).not.toContain('ra');
    expect(section(out, 'ANSWER').map((l) => l[3])).toContain(data);
    expect(section(out, 'ANSWER').every((l) => l[2] === type)).toBe(true);
  });

  it('puts the glue of MX and SRV targets in the additional section', async () => {
    const out = await dig(port, 'example.test', 'MX');
    expect(section(out, 'ADDITIONAL')).toContainEqual(['mail.example.test.', '300', 'A', '192.0.2.25']);
  });

  it('answers NXDOMAIN with the SOA and the negative TTL min(SOA TTL, MINIMUM)', async () => {
    const out = await dig(port, 'nope.example.test', 'A');
    expect(status(out)).toBe('NXDOMAIN');
    expect(flags(out)).toContain('aa');
    expect(section(out, 'ANSWER')).toEqual([]);
    expect(section(out, 'AUTHORITY')).toEqual([
      [
        'example.test.',
        '60',
        'SOA',
        'ns1.example.test. hostmaster.example.test. 2026112201 7200 3600 1209600 60',
      ],
    ]);
  });

  it('answers NODATA (NOERROR, no answer) with the SOA for a type the name lacks', async () => {
    const out = await dig(port, 'web.example.test', 'MX');
    expect(status(out)).toBe('NOERROR');
    expect(section(out, 'ANSWER')).toEqual([]);
    expect(section(out, 'AUTHORITY')[0]?.slice(0, 3)).toEqual(['example.test.', '60', 'SOA']);
  });

  it('follows CNAME chains inside the zone and stops at names outside it', async () => {
    expect(lines(await dig(port, 'c1.example.test', 'A', '+noall', '+answer'))).toEqual([
      ['c1.example.test.', '300', 'CNAME', 'c2.example.test.'],
      ['c2.example.test.', '300', 'CNAME', 'web.example.test.'],
      ['web.example.test.', '300', 'A', '192.0.2.80'],
    ]);
    expect(lines(await dig(port, 'ext.example.test', 'A', '+noall', '+answer'))).toEqual([
      ['ext.example.test.', '300', 'CNAME', 'example.org.'],
    ]);
    expect(lines(await dig(port, 'www.example.test', 'CNAME', '+noall', '+answer'))).toEqual([
      ['www.example.test.', '300', 'CNAME', 'web.example.test.'],
    ]);
    const dangling = await dig(port, 'dangling.example.test', 'A');
    expect(status(dangling)).toBe('NXDOMAIN'); // RFC 6604: the rcode of the last name
    expect(section(dangling, 'ANSWER')[0]?.[2]).toBe('CNAME');
  });

  it('synthesises from wildcards, but not past existing names or empty non-terminals (RFC 4592)', async () => {
    expect(lines(await dig(port, 'anything.wild.example.test', 'A', '+noall', '+answer'))).toEqual([
      ['anything.wild.example.test.', '300', 'A', '192.0.2.50'],
    ]);
    expect(lines(await dig(port, 'a.b.wild.example.test', 'TXT', '+noall', '+answer'))).toEqual([
      ['a.b.wild.example.test.', '300', 'TXT', '"wildcard"'],
    ]);
    const explicit = await dig(port, 'sub.wild.example.test', 'A');
    expect(status(explicit)).toBe('NOERROR');
    expect(section(explicit, 'ANSWER')).toEqual([]);
    expect(lines(await dig(port, 'q.ent.example.test', 'A', '+noall', '+answer'))[0]?.[3]).toBe('192.0.2.60');
    const ent = await dig(port, 'b.ent.example.test', 'A');
    expect(status(ent)).toBe('NOERROR'); // the empty non-terminal exists
    expect(section(ent, 'ANSWER')).toEqual([]);
    expect(status(await dig(port, 'x.b.ent.example.test', 'A'))).toBe('NXDOMAIN'); // blocked by b.ent
  });

  it('refers delegations with NS and glue, without AA', async () => {
    for (const name of ['deleg.example.test', 'www.deleg.example.test']) {
      const out = await dig(port, name, 'A', '+norec');
      expect(status(out)).toBe('NOERROR');
      expect(flags(out)).not.toContain('aa');
      expect(section(out, 'ANSWER')).toEqual([]);
      expect(
        section(out, 'AUTHORITY')
          .map((l) => l[3])
          .sort(),
      ).toEqual(['ns.elsewhere.example.', 'ns1.deleg.example.test.']);
      expect(section(out, 'ADDITIONAL')).toContainEqual([
        'ns1.deleg.example.test.',
        '300',
        'A',
        '192.0.2.53',
      ]);
    }
  });

  it('keeps the letter case of the query', async () => {
    expect(lines(await dig(port, 'WeB.ExAmPlE.TeSt', 'A', '+noall', '+answer'))).toEqual([
      ['WeB.ExAmPlE.TeSt.', '300', 'A', '192.0.2.80'],
    ]);
    // twice: the second answer comes from the response cache
    expect(lines(await dig(port, 'wEb.eXaMpLe.tEsT', 'A', '+noall', '+answer'))[0]?.[0]).toBe(
      'wEb.eXaMpLe.tEsT.',
    );
  });

  it('answers ANY with one RRset (RFC 8482)', async () => {
    const answer = lines(await dig(port, 'example.test', 'ANY', '+noall', '+answer'));
    expect(answer.length).toBeGreaterThan(0);
    expect(new Set(answer.map((l) => l[2])).size).toBe(1);
  });

  it('answers DS at a child apex from the hosted parent that delegates to it', async () => {
    const child = exampleZone('deleg.example.test');
    child.zoneId = 'zone_child';
    source.put(child);
    await server.settled();
    const ds = await dig(port, 'deleg.example.test', 'DS', '+norec');
    expect(flags(ds)).toContain('aa');
    expect(section(ds, 'AUTHORITY')[0]?.[0]).toBe('example.test.'); // the parent's SOA
    const a = await dig(port, 'deleg.example.test', 'A');
    expect(flags(a)).toContain('aa'); // the child answers everything else
    expect(section(a, 'ANSWER')[0]?.[3]).toBe('192.0.2.1');
    source.remove('deleg.example.test');
    await server.settled();
  });

  it('refuses names it does not host, and never recurses', async () => {
    const out = await dig(port, 'example.com', 'A');
    expect(status(out)).toBe('REFUSED');
    expect(flags(out)).not.toContain('aa');
    expect(flags(out)).not.toContain('ra');
  });

  it('echoes EDNS(0) and answers BADVERS to EDNS version 1', async () => {
    const out = await dig(port, 'example.test', 'A', '+dnssec');
    expect(out).toMatch(/EDNS: version: 0, flags: do; udp: 1232/);
    expect(status(await dig(port, 'example.test', 'A', '+edns=1', '+noednsneg'))).toBe('BADVERS');
  });

  it('answers a query signed with an unknown TSIG key NOTAUTH/BADKEY, unsigned (RFC 8945)', async () => {
    const secret = Buffer.alloc(32, 7).toString('base64');
    const udp = await dig(port, 'example.test', 'SOA', '-y', `hmac-sha256:nobody.example:${secret}`);
    expect(status(udp)).toBe('NOTAUTH');
    expect(udp).toMatch(
      /TSIG PSEUDOSECTION:\n(nobody\.example\.\s+0\s+ANY\s+TSIG\s+hmac-sha256\.\s+\d+\s+\d+\s+0\s+\d+\s+BADKEY)/,
    );
    expect(section(udp, 'ANSWER')).toEqual([]);
    const { stdout, stderr } = await run('kdig', [
      '@127.0.0.1',
      '-p',
      String(port),
      '-y',
      `hmac-sha256:nobody.example:${secret}`,
      'example.test',
      'AXFR',
    ]).catch((e: { stdout?: string; stderr?: string }) => ({
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? '',
    }));
    expect(`${stdout}${stderr}`).toMatch(/NOTAUTH|BADKEY/);
    expect(stdout).not.toMatch(/many\.example\.test\./);
  });

  it('answers NOTIMP to an unknown opcode, with or without a question', async () => {
    expect(status(await dig(port, 'example.test', 'SOA', '+opcode=15'))).toBe('NOTIMP');
    expect(status(await dig(port, '+opcode=15', '+header-only'))).toBe('NOTIMP');
  });

  it('sets TC when the answer does not fit, and the TCP answer is whole', async () => {
    const udp = await dig(port, 'many.example.test', 'A', '+noedns', '+ignore');
    expect(flags(udp)).toContain('tc');
    expect(section(udp, 'ANSWER')).toEqual([]);
    const small = await dig(port, 'many.example.test', 'A', '+bufsize=512', '+ignore');
    expect(flags(small)).toContain('tc');
    const tcp = await dig(port, 'many.example.test', 'A', '+tcp');
    expect(flags(tcp)).not.toContain('tc');
    expect(section(tcp, 'ANSWER')).toHaveLength(60);
    // dig's own fallback: without +ignore it retries over TCP
    expect(section(await dig(port, 'many.example.test', 'A', '+noedns'), 'ANSWER')).toHaveLength(60);
    // with a 1232-byte EDNS buffer it fits in UDP
    expect(flags(await dig(port, 'many.example.test', 'A', '+bufsize=1232', '+ignore'))).not.toContain('tc');
  });

  it('compresses names', async () => {
    const out = await dig(port, 'many.example.test', 'A', '+tcp');
    const size = Number(/MSG SIZE {2}rcvd: (\d+)/.exec(out)?.[1]);
    // 60 A records with a compressed owner take 16 bytes each
    expect(size).toBeLessThan(12 + 23 + 60 * 16 + 11 + 1);
  });

  it('transfers the zone over TCP to allowed addresses (AXFR)', async () => {
    const out = await dig(port, 'example.test', 'AXFR');
    const records = lines(out);
    expect(records[0]?.[2]).toBe('SOA');
    expect(records.at(-1)?.[2]).toBe('SOA');
    const types = new Set(records.map((l) => l[2]));
    for (const t of ['A', 'AAAA', 'MX', 'TXT', 'CAA', 'NS', 'SRV', 'PTR', 'CNAME'])
      expect(types).toContain(t);
    expect(records.filter((l) => l[0] === 'many.example.test.')).toHaveLength(60);
    const { stdout } = await run('kdig', ['@127.0.0.1', '-p', String(port), 'example.test', 'AXFR']);
    expect(stdout).toMatch(/many\.example\.test\./);
    expect(await dig(port, 'example.com', 'AXFR')).toMatch(/Transfer failed/);
  });

  it('follows zone changes, and sends NOTIFY to secondaries on a new serial', async () => {
    const zone = exampleZone();
    zone.soa.serial += 1;
    zone.records.push({ name: 'new.example.test', ttl: 120, data: { type: 'A', address: '203.0.113.7' } });
    source.put(zone);
    await server.settled();
    expect(lines(await dig(port, 'new.example.test', 'A', '+noall', '+answer'))).toEqual([
      ['new.example.test.', '120', 'A', '203.0.113.7'],
    ]);
    for (let i = 0; i < 50 && notifies.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(notifies.length).toBeGreaterThan(0);
    expect((notifies[0]![2]! >> 3) & 0xf).toBe(4); // opcode NOTIFY
    source.remove('example.test');
    await server.settled();
    expect(status(await dig(port, 'example.test', 'A'))).toBe('REFUSED');
    source.put(exampleZone());
    await server.settled();
  });

  it('counts queries per zone and type for the statistics sink', async () => {
    await dig(port, 'example.test', 'TXT');
    await server.flushStats();
    const rows = stats.batches.flat();
    const txt = rows.filter((r) => r.zoneId === 'zone_example.test' && r.qtype === 'TXT');
    expect(txt.reduce((n, r) => n + r.count, 0)).toBeGreaterThan(0);
    expect(rows.every((r) => r.totalMicros >= 0 && r.at > 0)).toBe(true);
  });
});
