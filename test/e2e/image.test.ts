import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FjordContainer, type StartedFjordContainer } from '../../packages/testcontainers-fjord/index.js';
import { eventually } from '../helpers/eventually.js';
import { buildImage, imageSkipReason, podman, podmanConf, publishedPort } from '../helpers/fjord-image.js';

/**
 * Fjord's image as users get it: `npm run image` builds it (Debian's mirror and npm only), podman
 * runs it with its ports published on loopback, and real clients outside the container use it:
 * curl-like fetches of /healthz, the AWS CLI for an S3 round trip, dig for a DNS answer and
 * mosquitto_pub for an MQTT publish. Then the Testcontainers module (packages/testcontainers-fjord)
 * starts the same image through podman's Docker-compatible API, as a user's test would.
 *
 * The first build on a machine downloads the Debian packages (minutes); later builds reuse the
 * Debian root kept in /var/cache/fjord-image and redo only the app layer. Skipped, with the reason,
 * where the image cannot be built (not root, or podman or debootstrap missing).
 */
const AWS = '/usr/bin/aws'; // Debian's awscli (docs: PITFALLS of PATH's pyenv shim)
const skipReason =
  imageSkipReason(['dig', 'mosquitto_pub']) ?? (existsSync(AWS) ? null : 'awscli is not installed');
if (skipReason) console.warn(`image tests skipped: ${skipReason}`);

const run = promisify(execFile);
const TAG = `localhost/fjord-image-test:${process.pid}`;
const NAME = `fjord-image-test-${process.pid}`;
let conf = '';
let work = '';
const port = { api: 0, s3: 0, dns: 0, mqtt: 0 };
let pat = '';

const api = async (method: string, path: string, body?: unknown) => {
  const r = await fetch(`http://127.0.0.1:${port.api}${path}`, {
    method,
    headers: { 'X-API-Key': pat, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  return { status: r.status, text, body: text ? JSON.parse(text) : null };
};

describe.skipIf(skipReason)('the image, run with podman', () => {
  beforeAll(async () => {
    conf = podmanConf();
    work = mkdtempSync(join(tmpdir(), 'fjord-image-test-'));
    await buildImage(TAG);
    const started = podman(conf, [
      'run',
      '--detach',
      '--name',
      NAME,
      ...['-p', '127.0.0.1::8080/tcp', '-p', '127.0.0.1::9000/tcp', '-p', '127.0.0.1::1883/tcp'],
      ...['-p', '127.0.0.1::5300/udp'],
      TAG,
    ]);
    expect(started.status, started.stderr).toBe(0);
    port.api = publishedPort(conf, NAME, '8080/tcp');
    port.s3 = publishedPort(conf, NAME, '9000/tcp');
    port.mqtt = publishedPort(conf, NAME, '1883/tcp');
    port.dns = publishedPort(conf, NAME, '5300/udp');
    await eventually(async () => {
      const r = await fetch(`http://127.0.0.1:${port.api}/readyz`);
      expect(r.status).toBe(200);
    }, 120_000).catch((err) => {
      throw new Error(`${err}\n${podman(conf, ['logs', NAME]).stderr.slice(-4000)}`);
    });
    const creds = podman(conf, ['exec', NAME, 'cat', '/var/lib/fjord/dev-credentials.json']);
    expect(creds.status, creds.stderr).toBe(0);
    pat = JSON.parse(creds.stdout).pat;
  }, 45 * 60_000);

  afterAll(() => {
    if (conf) {
      podman(conf, ['rm', '--force', '--time', '5', NAME]);
      podman(conf, ['rmi', '--force', TAG]);
    }
    if (work) rmSync(work, { recursive: true, force: true });
  }, 120_000);

  it('runs as its own user, not root, with the data dir on a volume', () => {
    const id = podman(conf, ['exec', NAME, 'id', '-u']).stdout.trim();
    expect(id).not.toBe('0');
    const image = podman(conf, [
      'image',
      'inspect',
      TAG,
      '--format',
      '{{json .Config.Volumes}} {{.Config.User}}',
    ]);
    expect(image.stdout).toContain('/var/lib/fjord');
    const processes = podman(conf, ['top', NAME, 'user', 'comm']).stdout;
    expect(processes).toMatch(/tini/);
    expect(processes).not.toMatch(/^root\s+node/m);
  });

  it('answers /healthz and serves the development customer', async () => {
    const health = await fetch(`http://127.0.0.1:${port.api}/healthz`);
    expect(health.status).toBe(200);
    const profile = await api('GET', '/v1/account/profile');
    expect(profile.status, profile.text).toBe(200);
  });

  it('takes an object from the AWS CLI and gives it back', async () => {
    const bucket = `image-${Date.now().toString(36)}`;
    const made = await api('POST', '/v1/storage/buckets', { bucket_name: bucket });
    expect(made.status, made.text).toBe(201);
    writeFileSync(
      join(work, 'aws-config'),
      '[default]\nregion = eu-north-1\ns3 =\n    signature_version = s3v4\n    addressing_style = path\n',
    );
    writeFileSync(
      join(work, 'aws-credentials'),
      `[default]\naws_access_key_id = ${made.body.access_key}\naws_secret_access_key = ${made.body.secret_key}\n`,
    );
    writeFileSync(join(work, 'in.txt'), 'from outside the container\n');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      AWS_CONFIG_FILE: join(work, 'aws-config'),
      AWS_SHARED_CREDENTIALS_FILE: join(work, 'aws-credentials'),
      AWS_EC2_METADATA_DISABLED: 'true',
    };
    delete env['AWS_CA_BUNDLE'];
    delete env['AWS_PROFILE'];
    const endpoint = ['--endpoint-url', `http://127.0.0.1:${port.s3}`];
    await run(AWS, [...endpoint, 's3', 'cp', join(work, 'in.txt'), `s3://${bucket}/hello.txt`], { env });
    await run(AWS, [...endpoint, 's3', 'cp', `s3://${bucket}/hello.txt`, join(work, 'out.txt')], { env });
    const listed = await run(AWS, [...endpoint, 's3', 'ls', `s3://${bucket}/`], { env });
    expect(listed.stdout).toContain('hello.txt');
    const { stdout } = await run('cat', [join(work, 'out.txt')]);
    expect(stdout).toBe('from outside the container\n');
  });

  it('answers dig for a record made through the API', async () => {
    const zone = 'image-test.example';
    const made = await api('POST', '/v1/dns/zones', { domain: zone });
    expect(made.status, made.text).toBe(201);
    const record = await api('POST', `/v1/dns/zones/${zone}/records`, {
      record_type: 'A',
      host: 'www',
      record: '192.0.2.44',
    });
    expect(record.status, record.text).toBe(201);
    await eventually(async () => {
      const { stdout } = await run('dig', [
        ...['@127.0.0.1', '-p', String(port.dns), `www.${zone}`, 'A'],
        ...['+short', '+norec', '+time=2', '+tries=1'],
      ]);
      expect(stdout.trim()).toBe('192.0.2.44');
    }, 20_000);
  });

  it('takes an MQTT publish from mosquitto_pub', async () => {
    const device = await api('POST', '/v1/iot/devices', { name: 'image-probe', device_id: 'image-probe' });
    expect(device.status, device.text).toBe(201);
    const c = device.body.mqtt_credentials;
    await run('mosquitto_pub', [
      ...['-h', '127.0.0.1', '-p', String(port.mqtt), '-V', 'mqttv311'],
      ...['-i', c.client_id, '-u', c.username, '-P', c.password],
      ...['-q', '1', '-t', `${c.topic_root}/telemetry`, '-m', '{"celsius": 21.5}'],
    ]);
    await eventually(async () => {
      const latest = await api('GET', '/v1/iot/devices/image-probe/telemetry/latest');
      expect(latest.body?.values?.celsius?.value, latest.text).toBe(21.5);
    }, 20_000);
  });

  describe('the Testcontainers module', () => {
    let service: ChildProcess | null = null;
    let container: StartedFjordContainer | null = null;

    beforeAll(async () => {
      // Testcontainers speaks Docker's API: podman serves it on a socket of this test's own.
      const socket = join(work, 'podman.sock');
      service = spawn('podman', ['system', 'service', '--time=0', `unix://${socket}`], {
        env: { ...process.env, CONTAINERS_CONF: conf },
        stdio: 'ignore',
      });
      await eventually(async () => expect(existsSync(socket)).toBe(true), 30_000);
      process.env['DOCKER_HOST'] = `unix://${socket}`;
      // No reaper container (it would be pulled from a registry); the test stops its container.
      process.env['TESTCONTAINERS_RYUK_DISABLED'] = 'true';
      process.env['TESTCONTAINERS_HOST_OVERRIDE'] = '127.0.0.1';
      container = await new FjordContainer(TAG).withAreas('storage').start();
    }, 180_000);

    afterAll(async () => {
      await container?.stop({ timeout: 5_000 });
      service?.kill('SIGTERM');
    }, 60_000);

    it('starts the areas asked for, ready, with its endpoints and PAT', async () => {
      const c = container!;
      expect((await fetch(`${c.getApiUrl()}/readyz`)).status).toBe(200);
      const key = await c.getPat();
      const profile = await fetch(`${c.getApiUrl()}/v1/account/profile`, { headers: { 'X-API-Key': key } });
      expect(profile.status).toBe(200);
      const bucket = await fetch(`${c.getApiUrl()}/v1/storage/buckets`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ bucket_name: 'from-testcontainers' }),
      });
      expect(bucket.status).toBe(201);
      // The S3 endpoint answers as S3 does: an unsigned request is refused in S3's XML.
      const s3 = await fetch(`${c.getS3Endpoint()}/from-testcontainers/x`);
      expect(s3.status).toBe(403);
      expect(await s3.text()).toContain('<Code>');
      // Only the roles of the areas asked for run.
      expect(() => c.getMqttUrl()).toThrow(/mqtt role is not running/);
    });
  });
});
