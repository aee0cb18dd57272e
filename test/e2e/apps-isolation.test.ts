import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_IDS_BASE, IDS_PER_APP } from '../../src/areas/apps/drivers/podman-userns.js';
import {
  buildBusyboxImage,
  containersOf,
  PODMAN,
  podmanFjord,
  podmanSkipReason,
  removeContainers,
  removeNetworks,
  viaIngress,
} from '../areas/apps-fixtures.js';
import { eventually } from '../helpers/eventually.js';
import type { TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * Escape and isolation attempts against real containers of the podman driver, each asserting it
 * fails: root in the container is an unprivileged id range on the host (a different one per app),
 * no privilege can be gained (no-new-privileges, seccomp on), a fork storm stops at the plan's
 * pids limit, and one customer's container cannot reach another customer's container or the
 * host's loopback services, while the ingress reaches both. Skipped, with the reason, where
 * podman cannot run containers.
 */
const IMAGE = `localhost/fjord-apps-test/isolation:${process.pid}`;
const skipReason = podmanSkipReason();
if (skipReason) console.warn(`apps isolation tier skipped: ${skipReason}`);

let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
let ingressPort = 0;
let apiPort = 0;
const appIds: string[] = [];

const podman = (...args: string[]) =>
  spawnSync('podman', [...PODMAN, ...args], { encoding: 'utf8', timeout: 60_000 });
/** Runs `script` in the container; stdout and stderr together. */
const inside = (container: string, script: string) => {
  const r = podman('exec', container, '/bin/sh', '-c', script);
  return `${r.stdout}${r.stderr}`;
};
/** Whether an HTTP GET from `container` to ip:port gets an answer. */
const reaches = (container: string, ip: string, port: number) =>
  inside(
    container,
    `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 ${ip} ${port} | head -1 | grep -q HTTP && echo REACHED || echo BLOCKED`,
  ).includes('REACHED');

async function deploy(customer: TestCustomer, name: string) {
  const c = await t.request('POST', '/v1/apps', { key: customer.pat, body: { name, image: IMAGE } });
  expect(c.status, c.text).toBe(201);
  appIds.push(c.body.id);
  await eventually(async () => {
    const r = await t.request('GET', `/v1/apps/${c.body.id}/revisions/1`, { key: customer.pat });
    expect(r.body.status, r.body.status_message).toBe('ready');
  }, 60_000);
  const [container] = containersOf(c.body.id);
  const inspect = podman(
    'inspect',
    '-f',
    '{{.State.Pid}} {{.HostConfig.PidsLimit}} {{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}',
    container!,
  ).stdout.trim();
  const [pid, pidsLimit, ip] = inspect.split(' ');
  const network = podman(
    'inspect',
    '-f',
    '{{range $k, $v := .NetworkSettings.Networks}}{{$k}}{{end}}',
    container!,
  ).stdout.trim();
  return {
    id: c.body.id as string,
    host: new URL(c.body.url).host,
    container: container!,
    pid: Number(pid),
    pidsLimit: Number(pidsLimit),
    ip: ip!,
    network,
  };
}

describe.skipIf(skipReason !== null)('container app isolation (podman)', () => {
  let appA: Awaited<ReturnType<typeof deploy>>;
  let appB: Awaited<ReturnType<typeof deploy>>;

  beforeAll(async () => {
    buildBusyboxImage(
      IMAGE,
      'echo "hello $HOSTNAME" > /www/index.html; exec /bin/busybox httpd -f -p $PORT -h /www',
      {
        links: ['sh', 'nc', 'cat', 'grep', 'head', 'sleep', 'seq', 'id', 'mknod', 'echo', 'printf'],
      },
    );
    ({ t, ingressPort, apiPort } = await podmanFjord());
    a = await t.customer();
    b = await t.customer();
    [appA, appB] = await Promise.all([deploy(a, 'alpha'), deploy(b, 'bravo')]);
  }, 180_000);

  afterAll(async () => {
    removeContainers(appIds);
    removeNetworks(t);
    await t?.close();
    podman('rmi', '-f', IMAGE);
  });

  it('maps root in the container to an unprivileged id range of the app’s own on the host', () => {
    const hostUid = (pid: number) =>
      Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
    expect(inside(appA.container, 'id -u').trim()).toBe('0');
    const [ua, ub] = [hostUid(appA.pid), hostUid(appB.pid)];
    expect(ua).toBeGreaterThanOrEqual(APP_IDS_BASE);
    expect(ub).toBeGreaterThanOrEqual(APP_IDS_BASE);
    expect(Math.abs(ua - ub)).toBeGreaterThanOrEqual(IDS_PER_APP);
    expect(inside(appA.container, 'cat /proc/self/uid_map').trim().split(/\s+/)).toEqual([
      '0',
      String(ua),
      String(IDS_PER_APP),
    ]);
    // Root inside cannot make a device node of the host's disks (no host capability over it).
    expect(inside(appA.container, 'mknod /tmp/disk b 8 0 && echo MADE || echo REFUSED')).toContain('REFUSED');
  });

  it('runs with no-new-privileges and seccomp on', () => {
    const status = readFileSync(`/proc/${appA.pid}/status`, 'utf8');
    expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
    expect(status).toMatch(/^Seccomp:\s+2$/m);
    expect(inside(appA.container, 'grep NoNewPrivs /proc/self/status')).toMatch(/NoNewPrivs:\s+1/);
  });

  it('stops a fork storm at the plan’s pids limit', () => {
    expect(appA.pidsLimit).toBe(128);
    const out = inside(appA.container, 'for i in $(seq 300); do sleep 2 & done; wait; echo finished');
    expect(out).toMatch(/can't fork|Resource temporarily unavailable/i);
  });

  it('keeps customers’ containers apart, and off the host’s loopback, while the ingress reaches both', async () => {
    expect(appA.network).not.toBe(appB.network);
    // The probe works: a container on A's own network reaches A's app.
    const probe = podman(
      'run',
      '--rm',
      '--network',
      appA.network,
      '--ulimit',
      'nofile=4096:4096',
      '--ulimit',
      'nproc=4096:4096',
      IMAGE,
      '/bin/sh',
      '-c',
      `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 ${appA.ip} 8080 | head -1`,
    );
    expect(probe.stdout).toContain('HTTP');
    expect(reaches(appA.container, appB.ip, 8080)).toBe(false);
    expect(reaches(appB.container, appA.ip, 8080)).toBe(false);
    // Fjord's API listens on the host's loopback; the container's loopback is its own.
    expect(reaches(appA.container, '127.0.0.1', apiPort)).toBe(false);
    expect(await viaIngress(ingressPort, appA.host)).toMatchObject({ status: 200 });
    expect(await viaIngress(ingressPort, appB.host)).toMatchObject({ status: 200 });
  });

  it('removes a customer’s network with their last app', async () => {
    const del = await t.request('DELETE', `/v1/apps/${appB.id}`, { key: b.pat });
    expect(del.status).toBe(200);
    expect(podman('network', 'exists', appB.network).status).not.toBe(0);
    expect(podman('network', 'exists', appA.network).status).toBe(0);
  });
});
