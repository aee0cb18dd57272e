import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import type { TestCustomer, TestFjord } from '../helpers/fjord.js';
import { TinyDns } from '../helpers/tiny-dns.js';
import {
  buildBusyboxImage,
  containersOf,
  PODMAN,
  podmanFjord,
  podmanSkipReason,
  removeContainers,
  removeNetworks,
  viaIngress as viaIngressOn,
} from './apps-fixtures.js';

// fjord-test: one store (sqlite). One pass runs it: podman’s volumes are its subject; the apps
// area's state is tested on both stores by apps-volumes.test.ts.

/**
 * Container apps with the podman driver and Fjord's object storage: an image archive (built
 * locally from busybox, saved with `podman save`, then removed from podman's store) uploaded with
 * curl through the presigned URL, deployed, and reached through the ingress. Skipped, with the
 * reason, where podman cannot run containers.
 */
const BUILT = `localhost/fjord-apps-test/upload:${process.pid}`;

const skipReason = podmanSkipReason(['curl']);
if (skipReason) console.warn(`apps podman storage tier skipped: ${skipReason}`);

/** Why volumes cannot be loop-mounted file systems here (their size is then not enforced), or null. */
function loopUsable(): string | null {
  if (process.getuid?.() !== 0) return 'loop mounts need root';
  try {
    execFileSync('losetup', ['-f'], { stdio: 'pipe' });
    execFileSync('mkfs.ext4', ['-V'], { stdio: 'pipe' });
  } catch (err) {
    return `no free loop device or no mkfs.ext4: ${(err as Error).message.split('\n')[0]}`;
  }
  return null;
}
const loopSkipReason = skipReason ?? loopUsable();
if (!skipReason && loopSkipReason) console.warn(`apps volume size test skipped: ${loopSkipReason}`);

/** An image archive as `podman save` writes it, of an image no longer in podman's store. */
function buildArchive(dir: string): string {
  buildBusyboxImage(
    BUILT,
    'mkdir -p /data; echo "uploaded $(cat /data/note 2>/dev/null)" > /www/index.html; exec /bin/busybox httpd -f -p $PORT -h /www',
  );
  const archive = join(dir, 'image.tar');
  execFileSync('podman', [...PODMAN, 'save', '-o', archive, BUILT]);
  execFileSync('podman', [...PODMAN, 'rmi', BUILT]);
  return archive;
}

let t: TestFjord;
let a: TestCustomer;
let ingressPort = 0;
let tlsPort = 0;
let dns: TinyDns;
let work = '';
let archive = '';
let uploadedApp: { id: string; url: string } | undefined;

const viaIngress = (host: string, path = '/') => viaIngressOn(ingressPort, host, path);

describe.skipIf(skipReason !== null)('container apps with uploads and volumes (podman driver)', () => {
  const appIds: string[] = [];
  const images: string[] = [];
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'fjord-apps-storage-'));
    archive = buildArchive(work);
    dns = await TinyDns.start();
    ({ t, ingressPort, tlsPort } = await podmanFjord({ FJORD_RESOLVER: dns.address, FJORD_S3_PORT: '0' }, [
      'api',
      's3',
    ]));
    a = await t.customer();
  }, 120_000);
  afterAll(async () => {
    removeContainers(appIds);
    removeNetworks(t);
    // Loading the archive brings back the tag it was saved under, too.
    for (const image of [...images, BUILT])
      try {
        execFileSync('podman', [...PODMAN, 'rmi', '-f', image], { stdio: 'pipe' });
      } catch {}
    await t?.close();
    await dns?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('deploys an image archive uploaded with curl through the presigned URL', async () => {
    const up = await t.request('POST', '/v1/apps/image-uploads', {
      key: a.pat,
      body: { size_bytes: statSync(archive).size },
    });
    expect(up.status).toBe(201);
    images.push(up.body.image);
    // Asynchronously: the S3 listener answering curl runs in this very process.
    const { stdout } = await promisify(execFile)(
      'curl',
      ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '60', '-T', archive, up.body.upload_url],
      { encoding: 'utf8' },
    );
    expect(stdout).toBe('200');
    const app = await t.request('POST', '/v1/apps', {
      key: a.pat,
      body: { name: 'uploaded', image: { upload_id: up.body.id } },
    });
    expect(app.status).toBe(201);
    appIds.push(app.body.id);
    await eventually(async () => {
      const rev = await t.request('GET', `/v1/apps/${app.body.id}/revisions/1`, { key: a.pat });
      expect(rev.body.status, rev.body.status_message).toBe('ready');
    }, 60_000);
    expect(await viaIngress(new URL(app.body.url).host)).toEqual({ status: 200, body: 'uploaded \n' });
    uploadedApp = app.body as { id: string; url: string };
  }, 120_000);

  it('keeps a volume’s files across deploys, and snapshots and restores them', async () => {
    const { id, url } = uploadedApp!;
    const host = new URL(url).host;
    const revisionReady = (n: number) =>
      eventually(async () => {
        const rev = await t.request('GET', `/v1/apps/${id}/revisions/${n}`, { key: a.pat });
        expect(rev.body.status, rev.body.status_message).toBe('ready');
      }, 60_000);
    const v = await t.request('POST', `/v1/apps/${id}/volumes`, {
      key: a.pat,
      body: { name: 'data', size_gb: 1, mount_path: '/data' },
    });
    expect(v.status).toBe(201);
    expect(v.body).toMatchObject({ used_bytes: 0, simulated: false });
    // Revision 2 writes a file into the volume once; revision 3 (the image's own command) only reads it.
    const writer = await t.request('POST', `/v1/apps/${id}/revisions`, {
      key: a.pat,
      body: {
        command: [
          '/bin/busybox',
          'sh',
          '-c',
          '[ -f /data/note ] || echo written-by-2 > /data/note; echo "uploaded $(cat /data/note)" > /www/index.html; exec /bin/busybox httpd -f -p $PORT -h /www',
        ],
      },
    });
    expect(writer.status).toBe(201);
    await revisionReady(2);
    expect(await viaIngress(host)).toEqual({ status: 200, body: 'uploaded written-by-2\n' });
    const reader = await t.request('POST', `/v1/apps/${id}/revisions`, {
      key: a.pat,
      body: { command: null },
    });
    expect(reader.status).toBe(201);
    await revisionReady(3);
    expect(await viaIngress(host)).toEqual({ status: 200, body: 'uploaded written-by-2\n' });
    const used = (await t.request('GET', `/v1/apps/${id}/volumes/data`, { key: a.pat })).body.used_bytes;
    expect(used).toBe('written-by-2\n'.length);

    // Scaled to zero and cold-started: still there.
    await t.advance(301);
    await eventually(async () => expect(containersOf(id)).toHaveLength(0), 15_000);
    expect(await viaIngress(host)).toEqual({ status: 200, body: 'uploaded written-by-2\n' });

    const snap = await t.request('POST', `/v1/apps/${id}/volumes/data/snapshots`, { key: a.pat });
    expect(snap.body).toMatchObject({ status: 'ready', error: null });
    const copy = await t.request('POST', `/v1/apps/${id}/volumes`, {
      key: a.pat,
      body: { name: 'copy', size_gb: 1, mount_path: '/copy', snapshot_id: snap.body.id },
    });
    // A failure names its cause: the answer and the errors Fjord logged (a 500 was seen once in a
    // full PostgreSQL run, never alone).
    const errors = () => t.logs.filter((l) => /"level":(50|60)/.test(l)).slice(-3);
    expect(copy.status, `${copy.text}\n${errors().join('\n')}`).toBe(201);
    expect(copy.body.used_bytes).toBe(used);
  }, 240_000);

  it.skipIf(loopSkipReason !== null)(
    'refuses writes past a volume’s size inside the container (ENOSPC)',
    async () => {
      const { id, url } = uploadedApp!;
      // The volume restored from the snapshot (1 GiB, at /copy): the free plan's second and last.
      const v = await t.request('GET', `/v1/apps/${id}/volumes/copy`, { key: a.pat });
      expect(v.body).toMatchObject({ size_gb: 1, size_enforced: true });
      // A revision (its instances mount both volumes) that tries to write 1.1 GiB into the
      // 1 GiB one, then says how dd ended.
      const filler = await t.request('POST', `/v1/apps/${id}/revisions`, {
        key: a.pat,
        body: {
          command: [
            '/bin/busybox',
            'sh',
            '-c',
            'echo up > /www/index.html; (/bin/busybox dd if=/dev/zero of=/copy/fill bs=1M count=1126; echo "dd exit $?") > /www/dd.txt 2>&1 & exec /bin/busybox httpd -f -p $PORT -h /www',
          ],
        },
      });
      expect(filler.status).toBe(201);
      const n = filler.body.number as number;
      await eventually(async () => {
        const rev = await t.request('GET', `/v1/apps/${id}/revisions/${n}`, { key: a.pat });
        expect(rev.body.status, rev.body.status_message).toBe('ready');
      }, 60_000);
      const dd = await eventually(async () => {
        const r = await viaIngress(new URL(url).host, '/dd.txt');
        expect(r.body).toContain('dd exit');
        return r.body;
      }, 120_000);
      expect(dd).toContain('No space left on device');
      expect(dd).not.toContain('dd exit 0');
      const used = (await t.request('GET', `/v1/apps/${id}/volumes/copy`, { key: a.pat })).body.used_bytes;
      expect(used).toBeGreaterThan(900 * 1024 * 1024);
      expect(used).toBeLessThanOrEqual(1024 ** 3);
      // The next revision serves the page of the volumes' files again, as the tests after this expect.
      const back = await t.request('POST', `/v1/apps/${id}/rollback`, {
        key: a.pat,
        body: { revision_id: '3' },
      });
      expect(back.status).toBe(200);
    },
    240_000,
  );

  it('serves a proven custom domain over HTTPS with the certificate the local CA issued', async () => {
    const { id, url } = uploadedApp!;
    const v = await t.request('POST', '/v1/domain-verification/domains', {
      key: a.pat,
      body: { domain: 'shop.example', purpose: 'custom_host' },
    });
    dns.txt.set(v.body.instructions.record_name, [v.body.instructions.record_value]);
    await t.request('POST', `/v1/domain-verification/domains/${v.body.id}/verify`, { key: a.pat });
    dns.cname.set('www.shop.example', new URL(url).hostname);
    expect(
      (
        await t.request('POST', `/v1/apps/${id}/domains`, {
          key: a.pat,
          body: { host_name: 'www.shop.example' },
        })
      ).status,
    ).toBe(201);
    // Not active yet: the ingress does not answer for the name.
    expect((await viaIngress('www.shop.example')).status).toBe(404);
    const c = await t.request('POST', `/v1/apps/${id}/domains/www.shop.example/check`, { key: a.pat });
    expect(c.body).toMatchObject({ status: 'active', certificate_status: 'issued' });
    const ca = (await t.request('GET', '/v1/apps/certificate-authority')).body.certificate_pem as string;

    const viaHttps = (trust: string | undefined) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpsRequest(
          {
            host: '127.0.0.1',
            port: tlsPort,
            servername: 'www.shop.example',
            headers: { host: 'www.shop.example' },
            ca: trust,
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (chunk) => {
              body += chunk;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    expect(await viaHttps(ca)).toEqual({ status: 200, body: 'uploaded written-by-2\n' });
    // Without the CA trusted, the client refuses the certificate.
    await expect(viaHttps(undefined)).rejects.toThrow();
    // Over plain HTTP too, by the custom name.
    expect(await viaIngress('www.shop.example')).toEqual({ status: 200, body: 'uploaded written-by-2\n' });
  }, 120_000);

  it('reports the requests the ingress served and each instance’s CPU and memory', async () => {
    const { id, url } = uploadedApp!;
    for (let i = 0; i < 5; i++) expect((await viaIngress(new URL(url).host)).status).toBe(200);
    const m = await t.request('GET', `/v1/apps/${id}/metrics?window=3600`, { key: a.pat });
    expect(m.status).toBe(200);
    expect(m.body).toMatchObject({ window_seconds: 3600, simulated: false, errors: 0 });
    expect(m.body.requests).toBeGreaterThanOrEqual(5);
    expect(m.body.latency_ms.p50).toEqual(expect.any(Number));
    expect(m.body.latency_ms.p95).toBeGreaterThanOrEqual(m.body.latency_ms.p50);
    expect(m.body.per_minute.at(-1).requests).toBeGreaterThanOrEqual(5);
    expect(m.body.instances).toHaveLength(1);
    expect(m.body.instances[0]).toMatchObject({ revision_number: 3, cpu_percent: expect.any(Number) });
    expect(m.body.instances[0].memory_bytes).toBeGreaterThan(0);
    expect((await t.request('GET', `/v1/apps/${id}/metrics?window=10`, { key: a.pat })).status).toBe(422);
  }, 60_000);
});
