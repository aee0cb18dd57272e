// deploy/kubernetes/ as written: each Deployment runs as one process with exactly the env
// (ConfigMap, Secret, its own env), args and volumes (claims and emptyDirs as directories) the
// manifests give it, on PostgreSQL and Redis, and the flows that cross roles work — an object
// PUT through the s3 role and read by the api role (a speech upload and upload-complete), the
// transcription job that the worker role runs on the same file, a command sent through the api
// role to a device connected to the mqtt role, and a live stream pushed to the rtmp role and
// played back from the api role. Only addresses are rewritten: a process here binds 127.0.0.1 on
// a port of its own, and the public addresses point at those.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { eventually } from '../helpers/eventually.js';
import { hasRedisServer, startThrowawayRedis } from '../helpers/redis.js';
import { scratchDir } from '../helpers/scratch-dir.js';
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
  // Made in beforeAll: a skipped describe's file runs no hook that would remove it.
  let root = '';
  const children: ChildProcess[] = [];
  const ports = { api: 0, s3: 0, mqtt: 0, rtmp: 0 };
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
    expect(env.FJORD_MQTT_PUBLIC_ADDRESS, 'FJORD_MQTT_PUBLIC_ADDRESS').toMatch(/^(?!0\.0\.0\.0)[^:]+:\d+$/);
    expect(env.FJORD_RTMP_PUBLIC_URL, 'FJORD_RTMP_PUBLIC_URL').toMatch(/^rtmps?:\/\/(?!0\.0\.0\.0)/);
    env.FJORD_HOST = '127.0.0.1';
    for (const k of Object.keys(env)) if (/^FJORD_[A-Z0-9]+_PORT$/.test(k)) env[k] = '0';
    env.FJORD_API_PORT = String(ports.api);
    env.FJORD_S3_PORT = String(ports.s3);
    env.FJORD_PUBLIC_URL = `http://127.0.0.1:${ports.api}`;
    env.FJORD_S3_PUBLIC_URL = `http://127.0.0.1:${ports.s3}`;
    env.FJORD_MQTT_PORT = String(ports.mqtt);
    env.FJORD_MQTT_PUBLIC_ADDRESS = `127.0.0.1:${ports.mqtt}`;
    env.FJORD_RTMP_PORT = String(ports.rtmp);
    env.FJORD_RTMP_PUBLIC_URL = `rtmp://127.0.0.1:${ports.rtmp}/live`;
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
    root = scratchDir('fjord-manifests-');
    store = await freshTestStore();
    redis = await startThrowawayRedis();
    ports.api = await freePort();
    ports.s3 = await freePort();
    ports.mqtt = await freePort();
    ports.rtmp = await freePort();
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
    // Queued, or already taken by the worker role, which hears of new jobs at once.
    expect(['queued', 'processing']).toContain(done.body.status);
    // The worker role runs the job on the same file.
    const ready = await eventually(async () => {
      const r = await api('GET', `/v1/transcript/jobs/${job.body.job_id}`);
      if (r.body.status !== 'ready') throw new Error(`job is ${r.body.status}`);
      return r.body;
    }, 60_000);
    expect(ready.text ?? JSON.stringify(ready.segments)).toMatch(/fox/);
  }, 90_000);

  it('sends a command through the api role to a device on the mqtt role', async () => {
    const d = await api('POST', '/v1/iot/devices', { name: 'k8s device', device_id: 'k8s-dev' });
    expect(d.status, d.text).toBe(201);
    const c = d.body.mqtt_credentials;
    // Devices are handed the broker's public address, which reaches the mqtt role.
    expect([c.host, c.port]).toEqual(['127.0.0.1', ports.mqtt]);
    const client = await mqtt.connectAsync(`mqtt://${c.host}:${c.port}`, {
      username: c.username,
      password: c.password,
      clientId: c.client_id,
      reconnectPeriod: 0,
      protocolVersion: 4,
    });
    try {
      await client.subscribeAsync(`${c.topic_root}/commands`, { qos: 1 });
      const received = new Promise<string>((resolve) =>
        client.on('message', (_t, p) => resolve(p.toString())),
      );
      await eventually(async () => {
        expect((await api('GET', '/v1/iot/devices/k8s-dev')).body.is_online).toBe(true);
      }, 20_000);
      const cmd = await api('POST', '/v1/iot/devices/k8s-dev/commands', { name: 'open' });
      expect(cmd.status, cmd.text).toBe(202);
      expect(JSON.parse(await received)).toMatchObject({ name: 'open', id: cmd.body.command_id });
    } finally {
      client.end(true);
    }
  }, 60_000);

  it('takes a live stream on the rtmp role and plays it back from the api role', async () => {
    const e = await api('POST', '/v1/live-events/events', {
      name: 'k8s',
      auto_start_on_ingest: true,
      record_enabled: false,
    });
    expect(e.status, e.text).toBe(201);
    // Encoders are handed the ingest's public URL, which reaches the rtmp role.
    expect(e.body.ingest_url).toBe(`rtmp://127.0.0.1:${ports.rtmp}/live`);
    const ff = spawn(
      'ffmpeg',
      [
        ...['-hide_banner', '-loglevel', 'error', '-re'],
        ...['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25:duration=4'],
        ...['-f', 'lavfi', '-i', 'sine=frequency=440:duration=4'],
        ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-c:a', 'aac', '-f', 'flv'],
        `${e.body.ingest_url}/${e.body.stream_key}`,
      ],
      { stdio: 'ignore' },
    );
    const pushed = once(ff, 'exit').then(([code]) => code as number);
    // The rtmp role writes the HLS segments on the shared volume; the api role serves them.
    const hls = `http://127.0.0.1:${ports.api}/live/hls/${e.body.id}`;
    const playlist = await eventually(async () => {
      const r = await fetch(`${hls}/index.m3u8`);
      const text = await r.text();
      expect(text).toMatch(/\.ts$/m);
      return text;
    }, 30_000);
    const segment = playlist.split('\n').find((l) => l.endsWith('.ts'))!;
    const seg = await fetch(`${hls}/${segment}`);
    expect(seg.status).toBe(200);
    expect(new Uint8Array(await seg.arrayBuffer())[0]).toBe(0x47); // MPEG-TS sync byte
    expect(await pushed).toBe(0);
  }, 90_000);
});
