// Fjord as users run it: `bin/fjord.js start`, which runs the bundle (dist/fjord.cjs) as a
// vm.Script with a V8 code cache — not the sources the other tiers import. The bundle is built
// and checked here as `npm ci` builds it (scripts/build.mjs, which refuses an import() the cache
// cannot run), started once to write the cache, stopped, started again on that cache, and then
// every module the bundle loads lazily is driven through a real request with the client people
// use: the openai SDK, a chatbot's stream, an OIDC login, an xxHash checksum from the AWS SDK, the
// apps' local CA (X.509), MQTT over WebSocket, and `fjord gpu-worker` as its own process.
//
// Runs once (in the first store's pass: Fjord here is on its embedded SQLite store either way).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Xxh64 } from '@aws-sdk/checksums/xxh';
import { PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { SignJWT } from 'jose';
import mqtt from 'mqtt';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type Issuer, type SigningKey, signingKey, startIssuer } from '../helpers/oidc-issuer.js';

const ROOT = join(import.meta.dirname, '..', '..');
const DIST = join(ROOT, 'dist');
const run = promisify(execFile);

let dataDir: string;
let issuer: Issuer;
let key: SigningKey;
let fjord: ChildProcess | undefined;
let api = '';
let s3Endpoint = '';
let pat = '';
let operatorToken = '';
let banner = '';
const children: ChildProcess[] = [];

/** The environment of a user's terminal, with a data dir and free ports of this test's own. */
function env(): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('FJORD_') && !k.startsWith('AWS_') && k !== 'NODE_OPTIONS') out[k] = v;
  return {
    ...out,
    FJORD_DATA_DIR: dataDir,
    FJORD_API_PORT: '0',
    FJORD_S3_PORT: '0',
    FJORD_DNS_PORT: '0',
    FJORD_MQTT_PORT: '0',
    FJORD_MQTT_WS_PORT: '0',
    FJORD_RTMP_PORT: '0',
    FJORD_LOG_LEVEL: 'warn',
    FJORD_EMULATOR: '1',
    FJORD_OIDC_ISSUER: issuer.url,
  };
}

/** `fjord start` until its banner is out; answers the banner. */
async function start(): Promise<string> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'fjord.js'), 'start'], {
    cwd: ROOT,
    env: env(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  fjord = child;
  return new Promise<string>((resolve, reject) => {
    let out = '';
    const take = (d: Buffer) => {
      out += d;
      if (/Development credentials/.test(out)) resolve(out);
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    child.once('exit', (code) => reject(new Error(`fjord exited ${code}:\n${out}`)));
  });
}

async function stop(): Promise<void> {
  const child = fjord;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** The start's V8 code cache files beside the bundle, by name and modification time. */
const startCaches = () =>
  Object.fromEntries(
    readdirSync(DIST)
      .filter((f) => f.startsWith('fjord.cjs.start.') && f.endsWith('.v8cache'))
      .map((f) => [f, statSync(join(DIST, f)).mtimeMs]),
  );

const call = async (method: string, path: string, body?: unknown, auth: 'pat' | 'operator' = 'pat') => {
  const r = await fetch(`${api}${path}`, {
    method,
    headers: {
      ...(auth === 'pat' ? { 'X-API-Key': pat } : { Authorization: `Bearer ${operatorToken}` }),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, text, body: text ? JSON.parse(text) : null };
};

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'fjord-shipped-'));
  key = await signingKey('ES256', 'shipped-1');
  issuer = await startIssuer([key.jwk], { discovery: true });
  // As `npm ci` builds it: the build fails on a bundle with an import() the cache cannot run.
  const built = await run(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT });
  expect(built.stdout).toContain('the bundle calls no import()');

  // The first start writes the code cache once it is ready; the second takes it.
  await start();
  await eventually(async () => expect(Object.keys(startCaches()).length).toBeGreaterThan(0), 30_000);
  await stop();
  const before = startCaches();
  banner = await start();
  api = /^\s*api\s+https?\s+(\S+)/m.exec(banner)![1]!;
  s3Endpoint = /^\s*s3\s+https?\s+(\S+)/m.exec(banner)![1]!;
  // V8 took the cache: a rejected one would be written again after this start.
  await call('GET', '/healthz');
  expect(startCaches()).toEqual(before);
  const creds = JSON.parse(readFileSync(join(dataDir, 'dev-credentials.json'), 'utf8'));
  pat = creds.pat;
  operatorToken = creds.operator_token;
}, 180_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  await stop();
  await issuer?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('Fjord started as users start it, on its code cache', () => {
  it('lists in its banner the listener of every role it started, on the ports bound', () => {
    for (const [role, protocol] of [
      ['api', 'http'],
      ['s3', 'http'],
      ['dns', 'dns'],
      ['mqtt', 'mqtt \\(tcp\\)'],
      ['mqtt', 'mqtt \\(ws\\)'],
      ['rtmp', 'rtmp'],
    ])
      expect(banner).toMatch(new RegExp(`^\\s*${role}\\s+${protocol}.*:(?!0\\b)\\d+`, 'm'));
    expect(banner).not.toContain('nothing listens');
  });

  it('answers a chat through the openai SDK (gpt-tokenizer)', async () => {
    const client = new OpenAI({ apiKey: pat, baseURL: `${api}/v1`, maxRetries: 0 });
    const answer = await client.chat.completions.create({
      model: 'fjord-echo',
      messages: [{ role: 'user', content: 'hello from the shipped tier' }],
    });
    expect(answer.choices[0]!.message.content).toContain('hello from the shipped tier');
    expect(answer.usage!.prompt_tokens).toBeGreaterThan(0);
  });

  it('streams a chatbot answer to its `done`', async () => {
    const bot = await call('POST', '/v1/chatbot/bots', { name: 'Shipped Desk' });
    expect(bot.status, bot.text).toBe(201);
    const source = await call('POST', `/v1/chatbot/bots/${bot.body.id}/sources`, {
      kind: 'text',
      title: 'Opening hours',
      text: 'The fjord office is open from nine to five on weekdays.',
    });
    expect(source.status, source.text).toBe(201);
    await eventually(async () => {
      const s = await call('GET', `/v1/chatbot/bots/${bot.body.id}/sources/${source.body.id}`);
      expect(s.body.status).toBe('ready');
    }, 30_000);
    const r = await fetch(`${api}/v1/chatbot/api/chat/stream`, {
      method: 'POST',
      headers: { 'X-API-Key': pat, 'Content-Type': 'application/json' },
      body: JSON.stringify({ bot_id: bot.body.id, message: 'When is the office open?' }),
    });
    const events = (await r.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    expect(events.at(-1)).toEqual({ type: 'done' });
  });

  it('logs in with an OIDC token (jose)', async () => {
    const token = await new SignJWT({ email: 'developer@fjord.local', email_verified: true })
      .setProtectedHeader({ alg: key.alg, kid: key.kid })
      .setIssuer(issuer.url)
      .setSubject('shipped-user')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key.privateKey);
    const r = await fetch(`${api}/v1/account/profile`, { headers: { Authorization: `Bearer ${token}` } });
    expect(r.status, await r.clone().text()).toBe(200);
    expect(((await r.json()) as { email: string }).email).toBe('developer@fjord.local');
  });

  it('checks an xxHash checksum from the AWS SDK (hash-wasm)', async () => {
    const bucket = await call('POST', '/v1/storage/buckets', { bucket_name: 'shipped-sums' });
    expect(bucket.status, bucket.text).toBe(201);
    const s3 = new S3Client({
      endpoint: s3Endpoint,
      region: 'eu-north-1',
      forcePathStyle: true,
      credentials: { accessKeyId: bucket.body.access_key, secretAccessKey: bucket.body.secret_key },
      checksumAlgorithms: { XXHASH64: Xxh64 },
    } as S3ClientConfig);
    try {
      const put = await s3.send(
        new PutObjectCommand({
          Bucket: 'shipped-sums',
          Key: 'a.txt',
          Body: 'fjord',
          ChecksumAlgorithm: 'XXHASH64',
        }),
      );
      expect(put.ChecksumXXHASH64).toMatch(/^[A-Za-z0-9+/]{11}=$/);
    } finally {
      s3.destroy();
    }
  });

  it('makes the apps’ local CA certificate (@peculiar/x509)', async () => {
    const r = await fetch(`${api}/v1/apps/certificate-authority`);
    expect(r.status).toBe(200);
    expect(((await r.json()) as { certificate_pem: string }).certificate_pem).toMatch(
      /^-----BEGIN CERTIFICATE-----/,
    );
  });

  it('carries a device’s message over MQTT on WebSocket (ws)', async () => {
    const device = await call('POST', '/v1/iot/devices', { name: 'shipped-1', device_id: 'shipped-1' });
    expect(device.status, device.text).toBe(201);
    const c = device.body.mqtt_credentials;
    const ports = (await call('GET', '/v1/iot/credentials')).body.ports;
    expect(ports.websocket).toEqual(expect.any(Number));
    const client = await mqtt.connectAsync(`ws://127.0.0.1:${ports.websocket}/mqtt`, {
      username: c.username,
      password: c.password,
      clientId: c.client_id,
      reconnectPeriod: 0,
      protocolVersion: 4,
    });
    try {
      await client.subscribeAsync(`devices/${c.username}/commands`, { qos: 1 });
      const got = new Promise<string>((resolve) => client.once('message', (_t, m) => resolve(m.toString())));
      const sent = await call('POST', '/v1/iot/devices/shipped-1/commands', { name: 'ping', params: {} });
      expect(sent.status, sent.text).toBeLessThan(300);
      expect(JSON.parse(await got)).toMatchObject({ name: 'ping' });
    } finally {
      await client.endAsync(true);
    }
  });

  it('renders a GPU job with `fjord gpu-worker`', { timeout: 90_000 }, async () => {
    const worker = await call(
      'POST',
      '/admin/v1/gpu/workers',
      { name: 'shipped', engines: ['reference-image'] },
      'operator',
    );
    expect(worker.status, worker.text).toBe(201);
    const job = await call('POST', '/v1/gpu/jobs', {
      type: 'image',
      engine: 'reference-image',
      inputs: { prompt: 'a fjord at dawn' },
    });
    expect(job.status, job.text).toBe(201);
    const child = spawn(
      process.execPath,
      [join(ROOT, 'bin', 'fjord.js'), 'gpu-worker', '--url', api, '--token', worker.body.token],
      { cwd: ROOT, env: env(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    await eventually(async () => {
      const now = await call('GET', `/v1/gpu/jobs/${job.body.id}`);
      expect(now.body.status, out).toBe('completed');
    }, 60_000);
  });
});
