import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acmeChallenges } from '../../src/areas/apps/acme.js';
import { eventually } from '../helpers/eventually.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { selfSigned } from '../helpers/https-receiver.js';
import { TinyDns } from '../helpers/tiny-dns.js';
import { LOCAL_TEST_IMAGES } from './apps-fixtures.js';

/**
 * Custom domain certificates from an ACME directory: Debian's pebble (a test ACME server)
 * validates the HTTP-01 challenge against Fjord's apps ingress (its DNS, pebble-challtestsrv,
 * answers 127.0.0.1 for every name), and the ingress then serves the issued certificate by SNI.
 * Skipped, with the reason, without pebble or podman (the ingress runs with the podman driver).
 */
function usable(): string | null {
  for (const tool of ['pebble', 'pebble-challtestsrv', 'podman', 'openssl'])
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'pipe' });
    } catch {
      return `${tool} is not installed (Debian: apt-get install pebble podman runc openssl)`;
    }
  return null;
}
const skipReason = usable();
if (skipReason) console.warn(`apps ACME tier skipped: ${skipReason}`);

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

let t: TestFjord;
let a: TestCustomer;
let dns: TinyDns;
let dir = '';
const children: ChildProcess[] = [];

describe.skipIf(skipReason !== null)('container app certificates over ACME (pebble)', () => {
  let tlsPort = 0;
  let managementPort = 0;
  let ingressPort = 0;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fjord-apps-acme-'));
    // pebble's own HTTPS certificate, which Fjord is told to trust (FJORD_APPS_ACME_CA_FILE).
    const pebbleTls = selfSigned('localhost', 'DNS:localhost,IP:127.0.0.1');
    writeFileSync(join(dir, 'key.pem'), pebbleTls.key);
    writeFileSync(join(dir, 'cert.pem'), pebbleTls.cert);
    let acmePort: number;
    let dnsPort: number;
    let challtestPort: number;
    [ingressPort, acmePort, dnsPort, challtestPort] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    managementPort = await freePort();
    dns = await TinyDns.start();
    t = await TestFjord.create({
      FJORD_APPS_DRIVER: 'podman',
      FJORD_APPS_INGRESS_PORT: String(ingressPort),
      FJORD_APPS_INGRESS_TLS_PORT: '0',
      FJORD_API_PORT: '0',
      FJORD_RESOLVER: dns.address,
      FJORD_APPS_ACME_DIRECTORY: `https://127.0.0.1:${acmePort}/dir`,
      FJORD_APPS_ACME_CA_FILE: join(dir, 'cert.pem'),
      FJORD_RATE_LIMITS: JSON.stringify({ 'container-apps': { points: 10_000, duration: 60 } }),
      ...LOCAL_TEST_IMAGES,
    });
    await t.fjord.start(['api']);
    const tls = t.kernel.registry.listeners.find((l) => l.protocol === 'https (apps ingress)');
    tlsPort = Number(tls!.address.split(':').pop());
    a = await t.customer();
    writeFileSync(
      join(dir, 'pebble.json'),
      JSON.stringify({
        pebble: {
          listenAddress: `127.0.0.1:${acmePort}`,
          managementListenAddress: `127.0.0.1:${managementPort}`,
          certificate: join(dir, 'cert.pem'),
          privateKey: join(dir, 'key.pem'),
          httpPort: ingressPort,
          tlsPort: 5001,
          ocspResponderURL: '',
          externalAccountBindingRequired: false,
        },
      }),
    );
    const off = (flag: string) => [flag, ''];
    children.push(
      spawn(
        'pebble-challtestsrv',
        [
          '-dns01',
          `127.0.0.1:${dnsPort}`,
          '-management',
          `127.0.0.1:${challtestPort}`,
          ...off('-http01'),
          ...off('-https01'),
          ...off('-tlsalpn01'),
          '-defaultIPv4',
          '127.0.0.1',
        ],
        { stdio: 'ignore' },
      ),
      spawn('pebble', ['-config', join(dir, 'pebble.json'), '-dnsserver', `127.0.0.1:${dnsPort}`], {
        stdio: 'ignore',
        env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' },
      }),
    );
    await eventually(async () => {
      const r = await fetch(`https://127.0.0.1:${acmePort}/dir`).catch(() => null);
      // Reaching it at all (even refusing our TLS trust) means it listens.
      expect(r === null ? await probe(acmePort) : true).toBe(true);
    }, 15_000);
    // The ingress listens on IPv4 loopback only: no AAAA answers, so pebble dials 127.0.0.1.
    await eventually(async () => {
      const r = await fetch(`http://127.0.0.1:${challtestPort}/set-default-ipv6`, {
        method: 'POST',
        body: JSON.stringify({ ip: '' }),
      });
      expect(r.status).toBe(200);
    }, 15_000);
  }, 60_000);
  afterAll(async () => {
    for (const c of children) c.kill('SIGTERM');
    await t?.close();
    await dns?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('obtains the certificate over HTTP-01 and serves it by SNI', async () => {
    const app = await t.request('POST', '/v1/apps', {
      key: a.pat,
      body: { name: 'acme', image: 'localhost/fjord-apps-test/none:1' },
    });
    const v = await t.request('POST', '/v1/domain-verification/domains', {
      key: a.pat,
      body: { domain: 'acme-shop.example', purpose: 'custom_host' },
    });
    dns.txt.set(v.body.instructions.record_name, [v.body.instructions.record_value]);
    await t.request('POST', `/v1/domain-verification/domains/${v.body.id}/verify`, { key: a.pat });
    dns.cname.set('www.acme-shop.example', new URL(app.body.url).hostname);
    await t.request('POST', `/v1/apps/acme/domains`, {
      key: a.pat,
      body: { host_name: 'www.acme-shop.example' },
    });
    const c = await t.request('POST', `/v1/apps/acme/domains/www.acme-shop.example/check`, { key: a.pat });
    expect(c.body.certificate_error ?? '', c.body.certificate_error).toBe('');
    expect(c.body).toMatchObject({
      status: 'active',
      certificate_status: 'issued',
      certificate_issuer: 'acme',
      certificate_error: null,
    });
    // Pebble's root signs it: fetch that root and trust it for an HTTPS request to the ingress.
    const root = await new Promise<string>((resolve, reject) => {
      httpsRequest(
        { host: '127.0.0.1', port: managementPort, path: '/roots/0', rejectUnauthorized: false },
        (res) => {
          let body = '';
          res.on('data', (chunk) => {
            body += chunk;
          });
          res.on('end', () => resolve(body));
        },
      )
        .on('error', reject)
        .end();
    });
    const status = await new Promise<number>((resolve, reject) => {
      httpsRequest(
        {
          host: '127.0.0.1',
          port: tlsPort,
          servername: 'www.acme-shop.example',
          headers: { host: 'www.acme-shop.example' },
          ca: root,
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      )
        .on('error', reject)
        .end();
    });
    // The TLS handshake succeeded with pebble's root; the app itself has no healthy revision.
    expect(status).toBe(503);
    // The challenges left the store once the order was validated.
    const left = await t.kernel.store.db
      .selectFrom('apps_acme_challenges' as never)
      .selectAll()
      .execute();
    expect(left).toEqual([]);
  }, 40_000);

  it('answers a challenge another process recorded in the store (the ACME server may call any)', async () => {
    // As a Fjord process sharing this store would record it while placing its order.
    const other = acmeChallenges(t.kernel);
    await other.put('tok-from-another-process', 'tok-from-another-process.thumbprint');
    const answer = await fetch(
      `http://127.0.0.1:${ingressPort}/.well-known/acme-challenge/tok-from-another-process`,
    );
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('tok-from-another-process.thumbprint');
    await other.delete('tok-from-another-process');
    const gone = await fetch(
      `http://127.0.0.1:${ingressPort}/.well-known/acme-challenge/tok-from-another-process`,
    );
    expect(gone.status).not.toBe(200);
  });
});

/** True when something accepts TCP connections on the port. */
function probe(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(true));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(false)));
  });
}
