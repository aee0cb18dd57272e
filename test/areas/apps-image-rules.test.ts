import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * Which images a revision may name, through the API (simulated driver): another customer's upload
 * is not found, whether named by id or by its reference; references podman could read as options
 * or that are not references are refused; registries off the operator's list, and listed ones on
 * loopback, private or link-local addresses, are refused before anything is pulled.
 */
let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;

beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_S3_PORT: '0',
    FJORD_RATE_LIMITS: JSON.stringify({ 'container-apps': { points: 10_000, duration: 60 } }),
    // Listed on purpose: a listed registry on a private address is still refused.
    FJORD_APPS_IMAGE_REGISTRIES: 'ghcr.io/team,127.0.0.1:5000,10.1.2.3,169.254.169.254,[::1]:5000',
  });
  await t.fjord.start(['s3']);
  a = await t.customer();
  b = await t.customer();
});
afterAll(() => t.close());

/** A minimal tar archive (one empty `manifest.json`), enough for an upload to count as an archive. */
function tarArchive(): Buffer {
  const header = Buffer.alloc(512);
  header.write('manifest.json', 0, 'latin1');
  for (const [at, text] of [
    [100, '0000644\0'],
    [108, '0000000\0'],
    [116, '0000000\0'],
    [124, '00000000000\0'],
    [136, '00000000000\0'],
    [148, '        '],
    [156, '0'],
    [257, 'ustar\x0000'],
  ] as const)
    header.write(text, at, 'latin1');
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return Buffer.concat([header, Buffer.alloc(1024)]);
}

async function uploaded(customer: TestCustomer) {
  const archive = tarArchive();
  const up = await t.request('POST', '/v1/apps/image-uploads', {
    key: customer.pat,
    body: { size_bytes: archive.length },
  });
  expect(up.status).toBe(201);
  expect((await fetch(up.body.upload_url, { method: 'PUT', body: archive })).status).toBe(200);
  return up.body as { id: string; image: string };
}

let n = 0;
const createApp = (image: unknown, customer = a) =>
  t.request('POST', '/v1/apps', { key: customer.pat, body: { name: `app-${++n}`, image } });

describe('container app image rules', () => {
  it('treats another customer’s upload as not found, by id or by the reference Fjord gave it', async () => {
    const theirs = await uploaded(b);
    for (const image of [{ upload_id: theirs.id }, theirs.image, `localhost/fjord-upload/${theirs.id}`]) {
      const r = await createApp(image);
      expect(r.status, JSON.stringify(image)).toBe(404);
      expect(r.body.detail.code).toBe('image_upload_not_found');
    }
    // Other names of the same local image (another tag, a digest) are not upload references at all.
    for (const image of [
      `localhost/fjord-upload/${theirs.id}:v2`,
      `localhost/fjord-upload/${theirs.id}@sha256:${'a'.repeat(64)}`,
    ]) {
      const r = await createApp(image);
      expect(r.status, image).toBe(422);
      expect(r.body.detail.code).toBe('invalid_image_reference');
    }
    // The owner deploys it either way; a deploy of the stranger's upload onto an own app is refused too.
    const own = await createApp(theirs.image, b);
    expect(own.status, own.text).toBe(201);
    const rev = await t.request('GET', `/v1/apps/${own.body.id}/revisions/1`, { key: b.pat });
    expect(rev.body).toMatchObject({ image: theirs.image, image_upload_id: theirs.id });
    const mine = await createApp('ghcr.io/team/web:1');
    expect(mine.status, mine.text).toBe(201);
    await t.advance(10);
    const redeploy = await t.request('POST', `/v1/apps/${mine.body.id}/revisions`, {
      key: a.pat,
      body: { image: theirs.image },
    });
    expect(redeploy.status).toBe(404);
    // The stranger's upload is still theirs, untouched.
    expect((await t.request('GET', `/v1/apps/image-uploads/${theirs.id}`, { key: a.pat })).status).toBe(404);
  });

  it('refuses references podman could read as options, and strings that are not references', async () => {
    for (const image of [
      '--privileged',
      '-v/etc:/host',
      '--network=host',
      'ghcr.io/Team/web:1',
      'ghcr.io//web:1',
      'ghcr.io/team/web:',
      'ghcr.io/team/web:-x',
      'ghcr.io/team/web@sha256:xyz',
      'ghcr.io/team/web:1@',
      'ghcr.io:99999/team/web',
      'http://ghcr.io/team/web:1',
    ]) {
      const r = await createApp(image);
      expect(r.status, image).toBe(422);
      expect(r.body.detail.code, image).toBe('invalid_image_reference');
    }
    const app = await createApp('ghcr.io/team/web:1');
    await t.advance(10);
    const r = await t.request('POST', `/v1/apps/${app.body.id}/revisions`, {
      key: a.pat,
      body: { image: '--entrypoint=/bin/sh' },
    });
    expect(r.status).toBe(422);
    expect(r.body.detail.code).toBe('invalid_image_reference');
  });

  it('pulls only from listed registries, and never from loopback, private or link-local addresses', async () => {
    for (const image of [
      '127.0.0.1:5000/x:1',
      '10.1.2.3/x:1',
      '169.254.169.254/latest:1',
      '[::1]:5000/x:1',
    ]) {
      const r = await createApp(image);
      expect(r.status, image).toBe(422);
      expect(r.body.detail.code, image).toBe('image_registry_private');
    }
    for (const image of [
      'evil.example/x:1',
      'localhost:5000/x:1',
      '10.9.9.9/x:1',
      '127.0.0.2:5000/x:1',
      'ghcr.io/other/web:1',
      'nginx:1.27',
    ]) {
      const r = await createApp(image);
      expect(r.status, image).toBe(422);
      expect(r.body.detail.code, image).toBe('image_registry_not_allowed');
      expect(r.body.detail.allowed_registries).toContain('ghcr.io/team');
    }
    const ok = await createApp('ghcr.io/team/web/api@sha256:0123456789abcdef0123456789abcdef');
    expect(ok.status, ok.text).toBe(201);
  });
});
