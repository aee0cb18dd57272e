import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandPath } from '../helpers/commands.js';
import { dnsServerOf, untilServed } from '../helpers/dns-records.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { scratchDir } from '../helpers/scratch-dir.js';

/**
 * The DynDNS2 clients people run, against a Fjord listening on real sockets: ddclient and
 * inadyn update a hostname, and `dig` against Fjord's DNS server sees the address.
 */
const run = promisify(execFile);
const ddclient = commandPath('ddclient');
const inadyn = commandPath('inadyn');
const dig = commandPath('dig');

let t: TestFjord;
let c: TestCustomer;
let apiPort: number;
let dnsPort: number;
const dir = scratchDir('fjord-dyn-');

beforeAll(async () => {
  t = await TestFjord.create({ FJORD_API_PORT: '0', FJORD_DNS_PORT: '0' });
  await t.fjord.start(['api', 'dns']);
  apiPort = Number(new URL(t.kernel.baseUrl()).port);
  dnsPort = dnsServerOf(t).port() ?? 0;
  c = await t.customer();
});
afterAll(() => t.close());

async function hostnameWithToken(label: string) {
  const h = await t.request('POST', '/v1/dyn/hostnames', {
    key: c.pat,
    body: { hostname: `${label}.dyn.fjord.test` },
  });
  const tok = await t.request('POST', `/v1/dyn/hostnames/${h.body.id}/router-tokens`, { key: c.pat });
  const { username, password } = tok.body as { username: string; password: string };
  return { hostname: h.body.hostname as string, hostnameId: h.body.id as string, username, password };
}

/** What `dig` gets from Fjord's DNS server, once the server serves `expected` (see untilServed). */
async function digA(name: string, expected: string): Promise<string> {
  await untilServed(t, name, 'A', (v) => v.includes(expected));
  const { stdout } = await run(dig!, [
    '@127.0.0.1',
    '-p',
    String(dnsPort),
    name,
    'A',
    '+short',
    '+time=2',
    '+tries=1',
  ]);
  return stdout.trim();
}

async function lastResults(id: string): Promise<string[]> {
  const r = await t.request('GET', `/v1/dyn/hostnames/${id}/updates`, { key: c.pat });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.updates.map((u: { result: string }) => u.result).reverse();
}

describe.skipIf(!ddclient || !dig)('ddclient (dyndns2)', () => {
  it('gets good, then nochg, and dig sees the address', async () => {
    const h = await hostnameWithToken('ddclient');
    const conf = join(dir, 'ddclient.conf');
    writeFileSync(
      conf,
      [
        'daemon=0',
        'syslog=no',
        `cache=${join(dir, 'ddclient.cache')}`,
        'use=ip, ip=203.0.113.10',
        'protocol=dyndns2',
        `server=127.0.0.1:${apiPort}`,
        'ssl=no',
        `login=${h.username}`,
        `password='${h.password}'`,
        h.hostname,
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    const args = ['-daemon=0', '-noquiet', '-verbose', '-file', conf, '-cache', join(dir, 'ddclient.cache')];
    const first = await run(ddclient!, args);
    expect(`${first.stdout}${first.stderr}`).toMatch(/SUCCESS/);
    expect(await digA(h.hostname, '203.0.113.10')).toBe('203.0.113.10');
    const second = await run(ddclient!, [...args, '-force']);
    expect(`${second.stdout}${second.stderr}`).toMatch(/RECEIVE: +nochg 203\.0\.113\.10/);
    expect(await lastResults(h.hostnameId)).toEqual(['good', 'nochg']);
  });
});

describe.skipIf(!inadyn || !dig)('inadyn (custom provider)', () => {
  it('gets good, then nochg, and dig sees the address', async () => {
    const h = await hostnameWithToken('inadyn');
    const conf = join(dir, 'inadyn.conf');
    writeFileSync(
      conf,
      [
        'period = 300',
        'custom fjord {',
        `  username = "${h.username}"`,
        `  password = "${h.password}"`,
        `  ddns-server = "127.0.0.1:${apiPort}"`,
        '  ddns-path = "/nic/update?hostname=%h&myip=%i"',
        '  ssl = false',
        `  hostname = "${h.hostname}"`,
        '}',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    const checkIp = join(dir, 'checkip.sh');
    writeFileSync(checkIp, '#!/bin/sh\necho 198.51.100.20\n', { mode: 0o700 });
    const args = [
      '--once',
      '--foreground',
      '-l',
      'debug',
      '-f',
      conf,
      '--cache-dir',
      join(dir, 'inadyn-cache'),
      '-c',
      checkIp,
      '--no-pidfile',
    ];
    await run(inadyn!, args);
    expect(await digA(h.hostname, '198.51.100.20')).toBe('198.51.100.20');
    await run(inadyn!, [...args, '--force']);
    expect(await lastResults(h.hostnameId)).toEqual(['good', 'nochg']);
  });
});
