import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IotService } from '../../src/areas/iot/service.js';
import type { LiveService } from '../../src/areas/live/service.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { type Issuer, type SigningKey, signingKey, startIssuer } from '../helpers/oidc-issuer.js';

/**
 * One rule for every credential kind: it works only while its customer is active. This file
 * walks every kind an area registers (`registry.addCredentialKind`): each is used once while the
 * customer is active, again after suspension (refused), and again after reactivation (works).
 * A new kind without a probe here fails the first test.
 */

/** Uses the credential once; true when it was accepted. */
type Probe = () => Promise<boolean>;

let t: TestFjord;
let c: TestCustomer;
let issuer: Issuer;
let key: SigningKey;
const probes = new Map<string, Probe>();

beforeAll(async () => {
  key = await signingKey('ES256', 'suspension');
  issuer = await startIssuer([key.jwk], { discovery: true });
  t = await TestFjord.create({
    FJORD_S3_PORT: '0',
    FJORD_OIDC_ISSUER: issuer.url,
    FJORD_OIDC_AUDIENCE: 'fjord',
  });
  await t.fjord.start(['s3']);
  c = await t.customer();
  const profileWith = async (auth: { key?: string; bearer?: string }) =>
    (await t.request('GET', '/v1/account/profile', auth)).status === 200;

  probes.set('pat', () => profileWith({ key: c.pat }));

  const serviceKey = (await t.kernel.identity.createServiceKey(c.id, 'storage', null)).key;
  probes.set(
    'service-key',
    async () => (await t.request('GET', '/v1/storage/buckets', { key: serviceKey })).status === 200,
  );

  const email = (await t.request('GET', '/v1/account/profile', { key: c.pat })).body.email as string;
  probes.set('oidc', async () => {
    const now = Math.floor(t.kernel.clock.nowMs() / 1000);
    const jwt = await new SignJWT({ email, email_verified: true })
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
      .setIssuer(issuer.url)
      .setSubject('suspension-sub')
      .setAudience('fjord')
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .sign(key.privateKey);
    return profileWith({ bearer: jwt });
  });

  const bucketName = `suspension-${Date.now().toString(36)}`;
  const bucket = await t.request('POST', '/v1/storage/buckets', {
    key: c.pat,
    body: { bucket_name: bucketName },
  });
  expect(bucket.status).toBe(201);
  const s3 = new S3Client({
    endpoint: bucket.body.endpoint,
    region: 'eu-north-1',
    forcePathStyle: true,
    credentials: { accessKeyId: bucket.body.access_key, secretAccessKey: bucket.body.secret_key },
    maxAttempts: 1,
  });
  probes.set('s3-access-key', () =>
    s3.send(new ListObjectsV2Command({ Bucket: bucketName })).then(
      () => true,
      () => false,
    ),
  );

  // A stream key, checked as the RTMP ingest checks an encoder's publish (then the session ends).
  const event = await t.request('POST', '/v1/live-events/events', {
    key: c.pat,
    body: { name: 'Suspension probe' },
  });
  expect(event.status).toBe(201);
  const live = t.fjord.areas.get('live')!.service as LiveService;
  let session = 0;
  probes.set('stream-key', async () => {
    const sid = `probe-${session++}`;
    const id = await live.sessions.ingestStarted(event.body.stream_key, sid);
    if (id) await live.sessions.ingestEnded(id, sid, 'probe', 0);
    return id !== null;
  });

  const host = await t.request('POST', '/v1/dyn/hostnames', {
    key: c.pat,
    body: { hostname: `suspension.dyn.fjord.test` },
  });
  expect(host.status).toBe(201);
  const token = await t.request('POST', `/v1/dyn/hostnames/${host.body.id}/router-tokens`, { key: c.pat });
  expect(token.status).toBe(201);
  const basic = Buffer.from(`${token.body.username}:${token.body.password}`).toString('base64');
  probes.set('dyn-credential', async () => {
    const r = await t.fjord.http.inject({
      method: 'GET',
      url: '/nic/update?hostname=suspension.dyn.fjord.test&myip=192.0.2.7',
      headers: { authorization: `Basic ${basic}`, 'user-agent': 'suspension-test/1.0' },
    });
    return r.statusCode === 200 && /^(good|nochg)/.test(r.body);
  });

  const device = await t.request('POST', '/v1/iot/devices', { key: c.pat, body: { name: 'Probe' } });
  expect(device.status).toBe(201);
  const iot = t.fjord.areas.get('iot')!.service as IotService;
  const { username, password } = device.body.mqtt_credentials;
  // The broker's login check: what a CONNECT with these credentials meets.
  probes.set('mqtt-device', async () => 'device' in (await iot.authenticate(username, password)));
});

afterAll(async () => {
  await t?.close();
  await issuer?.close();
});

const setStatus = async (status: 'active' | 'suspended') =>
  expect((await t.operator('PATCH', `/admin/v1/customers/${c.id}`, { status })).status).toBe(200);

async function outcomes(): Promise<Record<string, boolean>> {
  const result: Record<string, boolean> = {};
  for (const [kind, probe] of probes) result[kind] = await probe();
  return result;
}
const all = (value: boolean) => Object.fromEntries([...probes.keys()].map((k) => [k, value]));

describe('suspension reaches every credential kind', () => {
  it('has a probe for every kind the areas register', () => {
    const registered = t.kernel.registry.credentialKinds.map((k) => k.name).sort();
    expect([...probes.keys()].sort()).toEqual(registered);
  });

  it('every kind works while active, none while suspended, all again once reactivated', async () => {
    expect(await outcomes()).toEqual(all(true));
    await setStatus('suspended');
    expect(await outcomes()).toEqual(all(false));
    await setStatus('active');
    expect(await outcomes()).toEqual(all(true));
  });
});
