import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_IDS_BASE, IDS_PER_APP } from '../../src/areas/apps/drivers/podman-userns.js';
import { planOf } from '../../src/areas/vps/catalogue.js';
import type { ServerSpec } from '../../src/areas/vps/drivers/driver.js';
import { addressesOf } from '../../src/areas/vps/drivers/namespace/host.js';
import { TemplateCache } from '../../src/areas/vps/drivers/namespace/template.js';
import { NamespaceVpsDriver } from '../../src/areas/vps/drivers/namespace.js';
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

// fjord-test: one store (sqlite). One pass runs it: the host's network isolation of containers is
// its subject, not the store.

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
const exec = promisify(execFile);

/** Why no virtual server can run beside the containers here, or null (as in vps-escape.test.ts). */
function vpsSkipReason(): string | null {
  if (process.getuid?.() !== 0) return 'not root';
  for (const bin of ['debootstrap', 'ssh', 'newuidmap', 'nft', '/usr/bin/python3'])
    try {
      execFileSync('sh', ['-c', `command -v ${bin}`], { stdio: 'pipe' });
    } catch {
      return `${bin} is not installed`;
    }
  try {
    execFileSync('unshare', ['--user', '--map-root-user', '--mount', '--pid', '--fork', 'true'], {
      stdio: 'pipe',
    });
  } catch (err) {
    return `this machine cannot make user namespaces: ${(err as Error).message}`;
  }
  return null;
}
const vpsSkip = vpsSkipReason();

/**
 * A host service bound to `address` (every address by default), in a process of its own (the
 * probes run with spawnSync, which would stall a listener in this process): answers its port and
 * a stop.
 */
async function hostService(address = '0.0.0.0'): Promise<{ port: number; stop: () => void }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `require('net').createServer((c) => c.end('HTTP/1.0 200 OK\\r\\n\\r\\n')).listen(0, '${address}', function () { console.log(this.address().port); });`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<number>((resolve) =>
    child.stdout.once('data', (d) => resolve(Number(String(d).trim()))),
  );
  return { port, stop: () => child.kill() };
}
if (skipReason) console.warn(`apps isolation tier skipped: ${skipReason}`);

let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
let ingressPort = 0;
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
    ({ t, ingressPort } = await podmanFjord());
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
    // A host service on the host's loopback, in its own process so the blocking probe cannot
    // stall it: the container's loopback is its own, so it never sees the host's.
    const loopback = await hostService('127.0.0.1');
    try {
      expect(reaches(appA.container, '127.0.0.1', loopback.port)).toBe(false);
    } finally {
      loopback.stop();
    }
    expect(await viaIngress(ingressPort, appA.host)).toMatchObject({ status: 200 });
    expect(await viaIngress(ingressPort, appB.host)).toMatchObject({ status: 200 });
  });

  it('keeps containers off every host address, however a host service is bound', async () => {
    // A host service bound to all addresses: the container's gateway is one of the host's.
    const service = await hostService();
    try {
      const gateway = podman(
        'network',
        'inspect',
        '--format',
        '{{range .Subnets}}{{.Gateway}}{{end}}',
        appA.network,
      ).stdout.trim();
      expect(gateway).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect(reaches(appA.container, gateway, service.port)).toBe(false);
      // The host itself reaches it: the drop is the firewall's.
      expect(
        await new Promise<string>((resolve) => {
          let got = '';
          const c = connect({ host: gateway, port: service.port });
          c.on('data', (d) => (got += d));
          c.on('close', () => resolve(got));
          c.on('error', () => resolve(''));
          c.setTimeout(5000, () => c.destroy());
        }),
      ).toContain('HTTP');
    } finally {
      service.stop();
    }
  });

  // A customer's virtual servers (namespace driver) and container apps share the customer's
  // private network, and nothing across customers, in either direction.
  describe.skipIf(vpsSkip !== null)(
    `between container apps and virtual servers${vpsSkip ? ` (skipped: ${vpsSkip})` : ''}`,
    () => {
      const work = mkdtempSync(join(tmpdir(), 'fjord-apps-vps-'));
      let driver: NamespaceVpsDriver;
      let own: ServerSpec;
      let other: ServerSpec;
      const relay = new Map<string, string>();

      const ssh = async (id: string, command: string) =>
        (
          await exec(
            'ssh',
            [
              '-i',
              join(work, 'id'),
              ...[
                '-o',
                'BatchMode=yes',
                '-o',
                'StrictHostKeyChecking=no',
                '-o',
                'UserKnownHostsFile=/dev/null',
              ],
              ...['-o', 'LogLevel=ERROR', '-o', 'ConnectTimeout=10', `root@${relay.get(id)}`, command],
            ],
            { encoding: 'utf8', timeout: 60_000 },
          )
        ).stdout;
      const serverAddress = (id: string) =>
        addressesOf(
          (JSON.parse(readFileSync(join(work, 'servers', id, 'server.json'), 'utf8')) as { slot: number })
            .slot,
        );

      beforeAll(async () => {
        execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(work, 'id')]);
        const spec = (id: string, customerId: string): ServerSpec => ({
          id,
          customerId,
          hostname: `${id}.example.test`,
          plan: planOf('vps-1-2')!,
          osTemplate: 'debian-12',
          publicKeys: [readFileSync(join(work, 'id.pub'), 'utf8').trim()],
        });
        own = spec(`apps-own-${process.pid}`, a.id);
        other = spec(`apps-other-${process.pid}`, `another-${process.pid}`);
        driver = new NamespaceVpsDriver(
          join(work, 'servers'),
          new TemplateCache(join(tmpdir(), 'fjord-vps-templates')),
          pino({ level: 'silent' }),
        );
        const made = await Promise.all([own, other].map((x) => driver.provision(x)));
        await Promise.all(made.map((m) => m.ready));
        relay.set(own.id, made[0]!.ipv4);
        relay.set(other.id, made[1]!.ipv4);
      }, 1_800_000);

      afterAll(async () => {
        await driver?.destroyAll();
        await driver?.shutdown();
        rmSync(work, { recursive: true, force: true });
      }, 120_000);

      it('a server reaches its own customer’s container only, and a container its own customer’s server only', async () => {
        const http = (ip: string) =>
          `timeout 3 bash -c 'exec 3<>/dev/tcp/${ip}/8080 && printf "GET / HTTP/1.0\\r\\n\\r\\n" >&3 && head -1 <&3' || echo BLOCKED`;
        expect(await ssh(own.id, http(appA.ip))).toContain('HTTP');
        expect(await ssh(other.id, http(appA.ip))).toContain('BLOCKED');
        const sshd = (ip: string) => inside(appA.container, `nc -w 2 ${ip} 22 </dev/null | head -c 4; echo`);
        expect(sshd(serverAddress(own.id).server)).toContain('SSH-');
        expect(sshd(serverAddress(other.id).server)).not.toContain('SSH-');
        // The other server's gateway is a host address too: a host service bound to all of them.
        const service = await hostService();
        try {
          expect(reaches(appA.container, serverAddress(other.id).host, service.port)).toBe(false);
          expect(
            await ssh(
              other.id,
              `timeout 3 bash -c 'exec 3<>/dev/tcp/${serverAddress(own.id).host}/${service.port} && head -1 <&3' || echo BLOCKED`,
            ),
          ).toContain('BLOCKED');
        } finally {
          service.stop();
        }
      }, 120_000);
    },
  );

  it('removes a customer’s network with their last app', async () => {
    const del = await t.request('DELETE', `/v1/apps/${appB.id}`, { key: b.pat });
    expect(del.status).toBe(200);
    expect(podman('network', 'exists', appB.network).status).not.toBe(0);
    expect(podman('network', 'exists', appA.network).status).toBe(0);
  });
});
