// Container apps: cold start (request to first byte for an app scaled to zero) and the warm
// overhead of Fjord's ingress against calling the container's published port directly, in one
// run, on the same container.
//
//   npm run bench:apps [-- --requests 500 --colds 3]
//
// Needs podman, runc and busybox-static (Debian); the image is built locally (no registry).
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { TestFjord } from '../test/helpers/fjord.js';

const { values: args } = parseArgs({
  options: { requests: { type: 'string', default: '500' }, colds: { type: 'string', default: '3' } },
});
const REQUESTS = Number(args.requests);
const COLDS = Number(args.colds);
const PODMAN = ['--runtime', 'runc', '--cgroup-manager', 'cgroupfs', '--events-backend', 'file'];
const IMAGE = `localhost/fjord-apps-bench/web:${process.pid}`;

const pct = (v: number[], p: number) =>
  [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor((p / 100) * v.length))]!;
const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;

function buildImage() {
  const root = mkdtempSync(join(tmpdir(), 'fjord-apps-bench-'));
  try {
    mkdirSync(join(root, 'bin'));
    mkdirSync(join(root, 'www'));
    const busybox = existsSync('/bin/busybox') ? '/bin/busybox' : '/usr/bin/busybox';
    copyFileSync(busybox, join(root, 'bin/busybox'));
    chmodSync(join(root, 'bin/busybox'), 0o755);
    execFileSync('sh', ['-c', `echo hello > ${join(root, 'www/index.html')}`]);
    const tar = `${root}.tar`;
    execFileSync('tar', ['-C', root, '-cf', tar, '.']);
    execFileSync('podman', [
      ...PODMAN,
      'import',
      '--change',
      'CMD ["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/www"]',
      tar,
      IMAGE,
    ]);
    rmSync(tar, { force: true });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
/** Milliseconds to the first byte of the answer, and its status. */
function timed(port: number, host?: string): Promise<{ ms: number; status: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/', agent, headers: host ? { host } : {} },
      (res) => {
        const ms = performance.now() - t0;
        res.resume();
        res.on('end', () => resolve({ ms, status: res.statusCode ?? 0 }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
const running = (appId: string) =>
  execFileSync('podman', [...PODMAN, 'ps', '-q', '--filter', `label=fjord.app=${appId}`], {
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .filter(Boolean).length;

buildImage();
const t = await TestFjord.create({
  FJORD_LOG_LEVEL: 'fatal',
  FJORD_APPS_DRIVER: 'podman',
  FJORD_APPS_INGRESS_PORT: '0',
  FJORD_APPS_INGRESS_TLS_PORT: '0',
  FJORD_API_PORT: '0',
  FJORD_RATE_LIMITS: JSON.stringify({ 'container-apps': { points: 100_000_000, duration: 60 } }),
});
let appId = '';
let pat = '';
try {
  await t.fjord.start(['api']);
  const ingress = Number(
    t.kernel.registry.listeners
      .find((l) => l.protocol === 'http (apps ingress)')!
      .address.split(':')
      .pop(),
  );
  const c = await t.customer();
  pat = c.pat;
  pat = c.pat;
  const app = await t.request('POST', '/v1/apps', {
    key: c.pat,
    body: { name: 'bench', image: IMAGE, idle_timeout_seconds: 10 },
  });
  appId = app.body.id;
  const host = new URL(app.body.url).host;
  for (;;) {
    const a = await t.request('GET', `/v1/apps/${appId}`, { key: c.pat });
    if (a.body.status === 'running') break;
    if (a.body.status === 'failed') throw new Error(a.body.status_message);
    await new Promise((r) => setTimeout(r, 100));
  }
  const revision = app.body.latest_revision.id as string;
  const out = execFileSync('podman', [...PODMAN, 'port', `fjord-app-${revision}`, '8080/tcp'], {
    encoding: 'utf8',
  });
  const direct = Number(/:(\d+)\s*$/m.exec(out.trim())![1]);

  // Warm: the same container, alternately through the ingress and directly, one request at a time.
  const viaIngress: number[] = [];
  const viaPort: number[] = [];
  for (let i = 0; i < 50; i++) {
    await timed(ingress, host);
    await timed(direct);
  }
  for (let i = 0; i < REQUESTS; i++) {
    const a = await timed(ingress, host);
    const b = await timed(direct);
    if (a.status !== 200 || b.status !== 200) throw new Error(`status ${a.status} / ${b.status}`);
    viaIngress.push(a.ms);
    viaPort.push(b.ms);
  }

  // Cold: idle past the timeout on the clock, the sweep stops the container, one request starts it.
  const colds: number[] = [];
  for (let i = 0; i < COLDS; i++) {
    await t.advance(11);
    while (running(appId) > 0) await new Promise((r) => setTimeout(r, 100));
    const r = await timed(ingress, host);
    if (r.status !== 200) throw new Error(`cold start answered ${r.status}`);
    colds.push(r.ms);
  }

  console.log(`container apps, podman driver, ${REQUESTS} warm requests each way, ${COLDS} cold starts`);
  console.log(
    `direct to the container's port: mean ${mean(viaPort).toFixed(2)} ms, p50 ${pct(viaPort, 50).toFixed(2)} ms, p99 ${pct(viaPort, 99).toFixed(2)} ms`,
  );
  console.log(
    `through the ingress:            mean ${mean(viaIngress).toFixed(2)} ms, p50 ${pct(viaIngress, 50).toFixed(2)} ms, p99 ${pct(viaIngress, 99).toFixed(2)} ms`,
  );
  console.log(
    `ingress overhead: +${(mean(viaIngress) - mean(viaPort)).toFixed(2)} ms per request — ratio ${(mean(viaIngress) / mean(viaPort)).toFixed(2)}× (time to first byte)`,
  );
  console.log(
    `cold start (scaled to zero → first byte): median ${pct(colds, 50).toFixed(0)} ms, max ${Math.max(...colds).toFixed(0)} ms — ${(pct(colds, 50) / mean(viaIngress)).toFixed(0)}× a warm request`,
  );
} finally {
  if (appId) await t.request('DELETE', `/v1/apps/${appId}`, { key: pat }).catch(() => undefined);
  for (const id of execFileSync('podman', [...PODMAN, 'ps', '-aq', '--filter', `label=fjord.app=${appId}`], {
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .filter(Boolean))
    execFileSync('podman', [...PODMAN, 'rm', '-f', '-t', '0', id]);
  agent.destroy();
  await t.close();
  execFileSync('podman', [...PODMAN, 'rmi', '-f', IMAGE], { stdio: 'ignore' });
}
