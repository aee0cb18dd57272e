// deploy/kubernetes/ as written: each Deployment runs as one process with exactly the env
// (ConfigMap, Secret, its own env), args and volumes (claims and emptyDirs as directories) the
// manifests give it, on PostgreSQL and Redis, and the flows that cross roles work — an object
// PUT through the s3 role and read by the api role (a speech upload and upload-complete), and the
// transcription job that the worker role runs on the same file. Only addresses are rewritten: a
// process here binds 127.0.0.1 on a port of its own, and the public URLs point at those.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { eventually } from '../helpers/eventually.js';
import { hasRedisServer, startThrowawayRedis } from '../helpers/redis.js';
import { clipDir, speak } from '../helpers/speech.js';
import { freshTestStore, TEST_STORE, type TestStoreHandle } from '../helpers/store.js';

const FJORD = join(import.meta.dirname, '../../bin/fjord.js');
const MANIFEST = join(import.meta.dirname, '../../deploy/kubernetes/fjord.yaml');

// biome-ignore lint/suspicious/noExplicitAny: Kubernetes objects as parsed from YAML
type K8s = any;
const objects: K8s[] = parseAllDocuments(readFileSync(MANIFEST, 'utf8')).map((d) => d.toJS());
const ofKind = (kind: string) => objects.filter((o) => o.kind === kind);
const deployments = ofKind('Deployment');
const configMaps = new Map<string, Record<string, string>>(
  ofKind('ConfigMap').map((c) => [c.metadata.name, c.data]),
);
const claims = new Set(ofKind('PersistentVolumeClaim').map((c) => c.metadata.name as string));

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

describe.skipIf(TEST_STORE !== 'postgres' || !hasRedisServer)('deploy/kubernetes run as written', () => {
  let store: TestStoreHandle;
  let redis: Awaited<ReturnType<typeof startThrowawayRedis>>;
  const root = mkdtempSync(join(tmpdir(), 'fjord-manifests-'));
  const children: ChildProcess[] = [];
  const ports = { api: 0, s3: 0 };
  let secret: Record<string, string>;
  let apiEnv: NodeJS.ProcessEnv;
  let pat: string;

  /** The env, args and volume directories a Deployment's one container gets. */
  function podOf(d: K8s) {
    const pod = d.spec.template.spec;
    expect(pod.containers, d.metadata.name).toHaveLength(1);
    const c = pod.containers[0];
    const env: Record<string, string> = {};
    for (const from of c.envFrom ?? []) {
      const data = from.configMapRef
        ? configMaps.get(from.configMapRef.name)
        : from.secretRef?.name === 'fjord'
          ? secret
          : undefined;
      expect(data, `${d.metadata.name}: envFrom ${JSON.stringify(from)} is defined`).toBeDefined();
      Object.assign(env, data);
    }
    for (const e of c.env ?? []) env[e.name] = String(e.value);
    // Volumes as directories: one per claim (shared by every pod that mounts it), one per emptyDir.
    const mounts: [string, string][] = [];
    for (const m of c.volumeMounts ?? []) {
      const v = pod.volumes.find((x: K8s) => x.name === m.name);
      expect(v, `${d.metadata.name}: volume ${m.name}`).toBeDefined();
      let dir: string;
      if (v.persistentVolumeClaim) {
        const claim = v.persistentVolumeClaim.claimName;
        expect(claims, `${d.metadata.name}: claim ${claim} is defined`).toContain(claim);
        dir = join(root, `claim-${claim}`);
      } else if (v.emptyDir) dir = join(root, `empty-${d.metadata.name}-${m.name}`);
      else throw new Error(`${d.metadata.name}: volume kind of ${m.name} not modelled here`);
      execFileSync('mkdir', ['-p', dir]);
      mounts.push([m.mountPath, dir]);
    }
    for (const [k, value] of Object.entries(env)) {
      const mount = mounts.find(([path]) => value === path || value.startsWith(`${path}/`));
      if (mount) env[k] = mount[1] + value.slice(mount[0].length);
      else if (value.startsWith('/var/') || value.startsWith('/data')) {
        throw new Error(`${d.metadata.name}: ${k}=${value} is on no volume`);
      }
    }
    // Addresses only: loopback, a port of this test's own, public URLs that reach those ports.
    expect(env.FJORD_PUBLIC_URL, 'FJORD_PUBLIC_URL').toMatch(/^https?:\/\/(?!0\.0\.0\.0)/);
    expect(env.FJORD_S3_PUBLIC_URL, 'FJORD_S3_PUBLIC_URL').toMatch(/^https?:\/\/(?!0\.0\.0\.0)/);
    env.FJORD_HOST = '127.0.0.1';
    for (const k of Object.keys(env)) if (/^FJORD_[A-Z0-9]+_PORT$/.test(k)) env[k] = '0';
    env.FJORD_API_PORT = String(ports.api);
    env.FJORD_S3_PORT = String(ports.s3);
    env.FJORD_PUBLIC_URL = `http://127.0.0.1:${ports.api}`;
    env.FJORD_S3_PUBLIC_URL = `http://127.0.0.1:${ports.s3}`;
    return { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, args: c.args as string[] };
  }

  function run(d: K8s): Promise<void> {
    const { env, args } = podOf(d);
    if (d.metadata.name === 'fjord-api') apiEnv = env;
    const child = spawn(process.execPath, [FJORD, ...args], { env, stdio: 'pipe' });
    children.push(child);
    return new Promise((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c;
        if (/Listeners/.test(out) && /Back ends|Development/.test(out)) resolve();
      });
      child.stderr!.on('data', (c: Buffer) => (out += c));
      child.once('exit', (code) => reject(new Error(`${d.metadata.name} exited (${code}):\n${out}`)));
    });
  }

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${ports.api}${path}`, {
      method,
      headers: { 'x-api-key': pat, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, text, body: text ? JSON.parse(text) : null };
  };

  beforeAll(async () => {
    store = await freshTestStore();
    redis = await startThrowawayRedis();
    ports.api = await freePort();
    ports.s3 = await freePort();
    secret = {
      FJORD_DATABASE_URL: store.databaseUrl!,
      FJORD_REDIS_URL: redis.url,
      FJORD_DATA_KEY: randomBytes(32).toString('base64'),
      FJORD_OPERATOR_TOKEN: randomBytes(24).toString('hex'),
    };
    const byName = (n: string) => deployments.find((d) => d.metadata.name === n);
    // The api migrates the store; the other roles start on it.
    await run(byName('fjord-api'));
    await Promise.all(deployments.filter((d) => d.metadata.name !== 'fjord-api').map(run));
    const created = JSON.parse(
      execFileSync(
        process.execPath,
        [FJORD, 'admin', 'customer', 'create', '--email', 'k8s@example.test', '--plan', 'pro'],
        { env: apiEnv, encoding: 'utf8' },
      ),
    );
    pat = created.pat;
  }, 120_000);

  afterAll(async () => {
    const running = children.filter((c) => c.exitCode === null && c.signalCode === null);
    for (const c of running) c.kill('SIGTERM');
    const kill = setTimeout(() => {
      for (const c of running) c.kill('SIGKILL');
    }, 10_000);
    await Promise.all(running.map((c) => new Promise((r) => c.once('exit', r))));
    clearTimeout(kill);
    await redis?.stop();
    await store?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  it('runs one process per Deployment, every role of the product covered', () => {
    const roles = deployments.map((d) => d.spec.template.spec.containers[0].args.at(-1)).sort();
    expect(roles).toEqual(['api', 'dns', 'mqtt', 'rtmp', 's3', 'worker']);
    expect(children.every((c) => c.exitCode === null)).toBe(true);
  });

  it('uploads through s3, completes through api, transcribes on the worker', async () => {
    const wav = speak(clipDir(), 'the quick brown fox', 'wav');
    const job = await api('POST', '/v1/transcript/jobs', {
      filename: 'clip',
      content_type: 'audio/wav',
      file_size_bytes: statSync(wav).size,
    });
    expect(job.status, job.text).toBe(201);
    expect(job.body.upload_url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${ports.s3}/`));
    const put = await fetch(job.body.upload_url, { method: 'PUT', body: readFileSync(wav) });
    expect(put.status, await put.text()).toBe(200);
    // The api role reads the object the s3 role wrote: only a shared objects volume makes it there.
    const done = await api('POST', `/v1/transcript/jobs/${job.body.job_id}/upload-complete`, {});
    expect(done.status, done.text).toBe(200);
    expect(done.body.status).toBe('queued');
    // The worker role runs the job on the same file.
    const ready = await eventually(async () => {
      const r = await api('GET', `/v1/transcript/jobs/${job.body.job_id}`);
      if (r.body.status !== 'ready') throw new Error(`job is ${r.body.status}`);
      return r.body;
    }, 60_000);
    expect(ready.text ?? JSON.stringify(ready.segments)).toMatch(/fox/);
  }, 90_000);
});
