import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { TestFjord } from './fjord.js';

/** A Fjord serving S3 with one bucket, and the files and environment real S3 clients need. */
export interface S3ClientsFixture {
  t: TestFjord;
  pat: string;
  bucket: string;
  /** The data plane's address, as the control API gives it. */
  endpoint: string;
  keys: { access: string; secret: string };
  /** A temp dir holding `aws-config`, `aws-credentials` and `s3cfg` (s3cmd). */
  dir: string;
  /** For aws-cli (path style, SigV4, eu-north-1), s3cmd, curl: no machine CA bundle or profile. */
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/**
 * Starts the fixture: the `s3` role on a free port, a customer, the bucket `<prefix>-<time>` and
 * its key. `signatureV2` sets s3cmd's signing (SigV4 otherwise).
 */
export async function s3ClientsFixture(prefix: string, opts: { signatureV2?: boolean } = {}) {
  const t = await TestFjord.create({ FJORD_S3_PORT: '0' });
  await t.fjord.start(['s3']);
  const { pat } = await t.customer();
  const bucket = `${prefix}-${Date.now().toString(36)}`;
  const made = await t.request('POST', '/v1/storage/buckets', { key: pat, body: { bucket_name: bucket } });
  expect(made.status).toBe(201);
  const keys = { access: made.body.access_key as string, secret: made.body.secret_key as string };
  const endpoint = made.body.endpoint as string;
  const dir = mkdtempSync(join(tmpdir(), `fjord-s3-${prefix}-`));
  writeFileSync(
    join(dir, 'aws-config'),
    '[default]\nregion = eu-north-1\ns3 =\n    signature_version = s3v4\n    addressing_style = path\n',
  );
  writeFileSync(
    join(dir, 'aws-credentials'),
    `[default]\naws_access_key_id = ${keys.access}\naws_secret_access_key = ${keys.secret}\n`,
  );
  const host = new URL(endpoint).host;
  writeFileSync(
    join(dir, 's3cfg'),
    `[default]\naccess_key = ${keys.access}\nsecret_key = ${keys.secret}\nhost_base = ${host}\nhost_bucket = ${host}\nuse_https = False\nsignature_v2 = ${opts.signatureV2 ? 'True' : 'False'}\nbucket_location = eu-north-1\n`,
  );
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_CONFIG_FILE: join(dir, 'aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'aws-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
  };
  // The machine's CA bundle makes aws-cli and rclone refuse plain-HTTP endpoints.
  delete env['AWS_CA_BUNDLE'];
  delete env['AWS_PROFILE'];
  const fixture: S3ClientsFixture = {
    t,
    pat,
    bucket,
    endpoint,
    keys,
    dir,
    env,
    close: async () => {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return fixture;
}
