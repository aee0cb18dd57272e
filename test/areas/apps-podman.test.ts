import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_PLANS } from '../../src/areas/apps/catalogue.js';
import type { RevisionSpec } from '../../src/areas/apps/drivers/driver.js';
import { PodmanAppsDriver } from '../../src/areas/apps/drivers/podman.js';
import { serviceOf } from '../../src/areas/wiring.js';
import { eventually } from '../helpers/eventually.js';
import type { TestCustomer, TestFjord } from '../helpers/fjord.js';
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

// fjord-test: one store (sqlite). One pass runs it: podman running the revisions is its subject;
// the apps area's state is tested on both stores by apps.test.ts.

/**
 * Container apps with the podman driver: a tiny HTTP server image built from a local root
 * filesystem (busybox, no registry), deployed and reached through the ingress by host name; a
 * revision failing its health check while the first keeps serving; rollback; scale to zero on the
 * clock and a cold start; env and secrets reaching the process; tenant isolation by host.
 * Skipped, with the reason, where podman cannot run containers.
 */
const IMAGE = 'localhost/fjord-apps-test/web:1';
const skipReason = podmanSkipReason();
if (skipReason) console.warn(`apps podman tier skipped: ${skipReason}`);

/** The server writes what its environment says into its page, then serves it; /cgi-bin/slow takes 2 s. */
function buildImage() {
  buildBusyboxImage(
    IMAGE,
    'echo "hello $GREETING $TOKEN" > /www/index.html; echo started on $PORT; exec /bin/busybox httpd -f -p $PORT -h /www',
    {
      links: ['sh', 'sleep'],
      files: {
        'www/cgi-bin/slow': {
          text: '#!/bin/sh\nsleep 2\nprintf "Content-Type: text/plain\\r\\n\\r\\nslow\\n"\n',
          mode: 0o755,
        },
      },
    },
  );
}

let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
let ingressPort = 0;

/** A GET through the ingress with a chosen Host header. */
const viaIngress = (host: string, path = '/') => viaIngressOn(ingressPort, host, path);
const hostOf = (url: string) => new URL(url).host;
const revisionStatus = async (app: string, n: number) =>
  (await t.request('GET', `/v1/apps/${app}/revisions/${n}`, { key: a.pat })).body.status as string;

describe.skipIf(skipReason !== null)('container apps (podman driver)', () => {
  const appIds: string[] = [];
  beforeAll(async () => {
    buildImage();
    ({ t, ingressPort } = await podmanFjord());
    a = await t.customer();
    b = await t.customer();
  }, 120_000);
  afterAll(async () => {
    removeContainers(appIds);
    removeNetworks(t);
    await t?.close();
  });

  it('deploys, serves by host name, keeps serving through a failed revision, rolls back, scales to zero and cold-starts', async () => {
    const c = await t.request('POST', '/v1/apps', {
      key: a.pat,
      body: {
        name: 'web',
        image: IMAGE,
        env: { GREETING: 'from-env' },
        secrets: { TOKEN: 'from-secret' },
        idle_timeout_seconds: 10,
      },
    });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ status: 'deploying', driver: 'podman', simulated: false });
    expect(c.body.status_message).not.toContain('Simulated');
    const id = c.body.id as string;
    appIds.push(id);
    const host = hostOf(c.body.url);
    await eventually(async () => expect(await revisionStatus(id, 1)).toBe('ready'), 30_000);
    expect((await t.request('GET', `/v1/apps/${id}`, { key: a.pat })).body).toMatchObject({
      status: 'running',
      current_revision: { number: 1 },
    });

    const first = await viaIngress(host);
    expect(first).toMatchObject({ status: 200, body: 'hello from-env from-secret\n' });
    const logs = await t.request('GET', `/v1/apps/${id}/logs`, { key: a.pat });
    expect(logs.body.simulated).toBe(false);
    expect(logs.body.lines).toContainEqual(
      expect.objectContaining({ revision_number: 1, stream: 'stdout', text: 'started on 8080' }),
    );

    // A revision whose health check path is missing fails; the first keeps serving.
    const bad = await t.request('POST', `/v1/apps/${id}/revisions`, {
      key: a.pat,
      body: {
        env: { GREETING: 'two' },
        health_check: { path: '/missing', interval_seconds: 1, failure_threshold: 2 },
      },
    });
    expect(bad.status).toBe(201);
    await eventually(async () => expect(await revisionStatus(id, 2)).toBe('failed'), 30_000);
    const failed = await t.request('GET', `/v1/apps/${id}/revisions/2`, { key: a.pat });
    expect(failed.body.status_message).toContain('/missing');
    expect(await viaIngress(host)).toMatchObject({ status: 200, body: 'hello from-env from-secret\n' });

    // A good revision takes the traffic; rolling back brings the first one back (cold start).
    const good = await t.request('POST', `/v1/apps/${id}/revisions`, {
      key: a.pat,
      body: { env: { GREETING: 'three' }, health_check: { path: '/' } },
    });
    expect(good.status).toBe(201);
    await eventually(async () => expect(await revisionStatus(id, 3)).toBe('ready'), 30_000);
    expect(await viaIngress(host)).toMatchObject({ status: 200, body: 'hello three from-secret\n' });
    const back = await t.request('POST', `/v1/apps/${id}/rollback`, {
      key: a.pat,
      body: { revision_id: '1' },
    });
    expect(back.body).toMatchObject({ current_revision: { number: 1 } });
    expect(await viaIngress(host)).toMatchObject({ status: 200, body: 'hello from-env from-secret\n' });
    await eventually(async () => expect(containersOf(id)).toHaveLength(1), 10_000);

    // Idle past the timeout on the clock: the sweep stops the container; a request cold-starts it.
    await t.advance(11);
    expect((await t.request('GET', `/v1/apps/${id}`, { key: a.pat })).body.status).toBe('scaled_to_zero');
    await eventually(async () => expect(containersOf(id)).toHaveLength(0), 10_000);
    expect(await viaIngress(host)).toMatchObject({ status: 200, body: 'hello from-env from-secret\n' });
    expect(containersOf(id)).toHaveLength(1);

    // Suspended: 503, and the container goes.
    await t.request('POST', `/v1/apps/${id}/suspend`, { key: a.pat });
    const suspended = await viaIngress(host);
    expect(suspended.status).toBe(503);
    await eventually(async () => expect(containersOf(id)).toHaveLength(0), 10_000);
  }, 180_000);

  it('adopts at start the containers that should still run and removes the others', async () => {
    const owner = `test-${Date.now().toString(36)}`;
    const spec = (rev: string): RevisionSpec => ({
      appId: `adopt-app-${owner}`,
      customerId: `adopt-customer-${owner}`,
      revisionId: rev,
      hostLabel: 'adopt',
      idSlot: 0,
      image: IMAGE,
      imageArchive: null,
      volumes: [],
      command: null,
      args: null,
      port: 8080,
      env: { GREETING: 'adopted' },
      secrets: {},
      plan: APP_PLANS[0]!,
      concurrency: 80,
      minInstances: 0,
      maxInstances: 1,
      idleTimeoutSeconds: 60,
      healthCheck: { path: '/', interval_seconds: 5, timeout_seconds: 2, failure_threshold: 3 },
    });
    appIds.push(`adopt-app-${owner}`);
    const first = new PodmanAppsDriver(
      owner,
      pino({ level: 'silent' }),
      join(tmpdir(), 'fjord-adopt-volumes'),
    );
    await first.ensureRunning(spec(`${owner}-keep`));
    await first.ensureRunning(spec(`${owner}-drop`));
    expect(containersOf(`adopt-app-${owner}`)).toHaveLength(2);
    // The plan's memory and CPU are the container's limits (micro: 256 MB, a quarter of a CPU).
    const limits = execFileSync(
      'podman',
      [
        ...PODMAN,
        'inspect',
        '-f',
        '{{.HostConfig.Memory}} {{.HostConfig.NanoCpus}}',
        `fjord-app-${owner}-keep`,
      ],
      { encoding: 'utf8' },
    );
    expect(limits.trim()).toBe(`${256 * 1024 * 1024} 250000000`);
    // A new process (the first one crashed): it keeps what should run and removes the rest.
    const second = new PodmanAppsDriver(
      owner,
      pino({ level: 'silent' }),
      join(tmpdir(), 'fjord-adopt-volumes'),
    );
    expect(await second.adopt(new Set([`${owner}-keep`]))).toEqual({ adopted: 1, removed: 1 });
    expect(second.runningRevisions()).toEqual([`${owner}-keep`]);
    const target = await second.ensureRunning(spec(`${owner}-keep`));
    const body = await (await fetch(`http://${target.host}:${target.port}/`)).text();
    expect(body).toBe('hello adopted \n');
    expect(containersOf(`adopt-app-${owner}`)).toHaveLength(1);
    // Another install's containers are never touched.
    const stranger = new PodmanAppsDriver(
      `${owner}-other`,
      pino({ level: 'silent' }),
      join(tmpdir(), 'fjord-adopt-volumes'),
    );
    expect(await stranger.adopt(new Set())).toEqual({ adopted: 0, removed: 0 });
    await second.destroy(`adopt-app-${owner}`);
    expect(containersOf(`adopt-app-${owner}`)).toHaveLength(0);
  }, 120_000);

  it('adds instances up to max_instances when requests pile up, answers 503 beyond, and trims the extras', async () => {
    const c = await t.request('POST', '/v1/apps', {
      key: a.pat,
      body: { name: 'busy', image: IMAGE, concurrency: 1, max_instances: 2, idle_timeout_seconds: 10 },
    });
    const id = c.body.id as string;
    appIds.push(id);
    await eventually(async () => expect(await revisionStatus(id, 1)).toBe('ready'), 30_000);
    const host = hostOf(c.body.url);
    const answers = await Promise.all([1, 2, 3].map(() => viaIngress(host, '/cgi-bin/slow')));
    expect(answers.map((x) => x.status).sort()).toEqual([200, 200, 503]);
    expect(answers.filter((x) => x.status === 200).map((x) => x.body)).toEqual(['slow\n', 'slow\n']);
    expect(answers.find((x) => x.status === 503)?.retryAfter).toBe('1');
    expect(containersOf(id)).toHaveLength(2);
    // While requests keep coming (one at a time, so the first instance takes them all), the extra
    // instance idles out after the idle timeout and stops; the first stays.
    await eventually(async () => {
      expect((await viaIngress(host)).status).toBe(200);
      expect(containersOf(id)).toHaveLength(1);
    }, 25_000);
  }, 120_000);

  it('fails a deploy a restart interrupted, so the app can be deployed again', async () => {
    const apps = serviceOf(t.fjord.areas, 'apps')!;
    const c = await t.request('POST', '/v1/apps', { key: a.pat, body: { name: 'restarted', image: IMAGE } });
    const id = c.body.id as string;
    appIds.push(id);
    // What a new process finds: the revision deploying, with no driver left to report on it.
    expect(await apps.runtime.failInterruptedDeploys()).toBe(1);
    const rev = await t.request('GET', `/v1/apps/${id}/revisions/1`, { key: a.pat });
    expect(rev.body).toMatchObject({ status: 'failed' });
    expect(rev.body.status_message).toContain('restarted');
    // The container the interrupted deploy started is swept away.
    await eventually(async () => expect(containersOf(id)).toHaveLength(0), 15_000);
    expect((await t.request('POST', `/v1/apps/${id}/revisions`, { key: a.pat, body: {} })).status).toBe(201);
    await eventually(async () => expect(await revisionStatus(id, 2)).toBe('ready'), 30_000);
  }, 120_000);

  it('routes only an app’s own host, never another customer’s', async () => {
    const mine = await t.request('POST', '/v1/apps', { key: b.pat, body: { name: 'web', image: IMAGE } });
    appIds.push(mine.body.id);
    await eventually(
      async () =>
        expect((await t.request('GET', `/v1/apps/${mine.body.id}`, { key: b.pat })).body.status).toBe(
          'running',
        ),
      30_000,
    );
    expect((await viaIngress(hostOf(mine.body.url))).body).toBe('hello  \n');
    expect((await viaIngress(`web-nosuchaccount.apps.fjord.test`)).status).toBe(404);
    expect((await viaIngress('example.com')).status).toBe(404);
    // Deleting the app removes its container.
    await t.request('DELETE', `/v1/apps/${mine.body.id}`, { key: b.pat });
    expect(containersOf(mine.body.id)).toHaveLength(0);
  }, 120_000);
});
