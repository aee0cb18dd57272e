import {
  ListObjectsCommand,
  ListObjectVersionsCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './testing/harness.js';

let h: Harness;
let s3: S3Client;
const KEYS = ['a', 'b/1', 'b/2', 'b/3/x', 'c d', 'c+e', 'é', 'z/1'];

beforeAll(async () => {
  h = await startHarness();
  h.directory.addBucket({ name: 'lst', customerId: 'c1', versioning: 'Enabled' });
  h.directory.addKey({ accessKeyId: 'AKL', customerId: 'c1', grants: [{ bucket: 'lst', actions: 'all' }] });
  s3 = new S3Client({
    endpoint: h.endpoint,
    region: 'eu-north-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'AKL', secretAccessKey: 'secret-AKL' },
  });
  for (const k of KEYS) await s3.send(new PutObjectCommand({ Bucket: 'lst', Key: k, Body: k }));
  await s3.send(new PutObjectCommand({ Bucket: 'lst', Key: 'a', Body: 'again' }));
});
afterAll(async () => {
  s3?.destroy();
  await h?.close();
});

const raw = async (query: string) => (await fetch(`${h.endpoint}/lst?${query}`, { headers: {} })).text();

describe('listings', () => {
  it('pages V1 with a marker inside a common prefix without repeating it', async () => {
    const seen: string[] = [];
    let marker: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = await s3.send(
        new ListObjectsCommand({ Bucket: 'lst', Delimiter: '/', MaxKeys: 2, Marker: marker }),
      );
      seen.push(
        ...(page.Contents ?? []).map((c) => c.Key!),
        ...(page.CommonPrefixes ?? []).map((p) => p.Prefix!),
      );
      if (!page.IsTruncated) break;
      marker = page.NextMarker;
    }
    // Each entry once; within a page S3 lists contents and prefixes apart.
    expect(seen.sort()).toEqual(['a', 'b/', 'c d', 'c+e', 'z/', 'é'].sort());
  });

  it('lists in UTF-8 byte order and encodes names with encoding-type=url', async () => {
    h.directory.update('lst', { isPublic: true });
    const xml = await raw('list-type=2&encoding-type=url&prefix=c');
    expect(xml).toContain('<Key>c%20d</Key>');
    expect(xml).toContain('<Key>c%2Be</Key>');
    expect(xml).toContain('<EncodingType>url</EncodingType>');
    const all = await raw('list-type=2');
    const keys = [...all.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]);
    expect(keys).toEqual([...KEYS].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
    h.directory.update('lst', { isPublic: false });
  });

  it('pages object versions newest first with key and version markers', async () => {
    const seen: string[] = [];
    let keyMarker: string | undefined;
    let versionMarker: string | undefined;
    for (let i = 0; i < 20; i++) {
      const page = await s3.send(
        new ListObjectVersionsCommand({
          Bucket: 'lst',
          MaxKeys: 1,
          KeyMarker: keyMarker,
          VersionIdMarker: versionMarker,
        }),
      );
      seen.push(...(page.Versions ?? []).map((v) => `${v.Key}:${v.IsLatest}`));
      if (!page.IsTruncated) break;
      keyMarker = page.NextKeyMarker;
      versionMarker = page.NextVersionIdMarker;
    }
    expect(seen.slice(0, 2)).toEqual(['a:true', 'a:false']);
    expect(seen.length).toBe(KEYS.length + 1);
  });

  it('refuses a bad max-keys and a forged continuation token', async () => {
    h.directory.update('lst', { isPublic: true });
    expect(await raw('list-type=2&max-keys=-1')).toContain('InvalidArgument');
    expect(await raw('list-type=2&continuation-token=%%%')).toContain('InvalidArgument');
    h.directory.update('lst', { isPublic: false });
  });
});
