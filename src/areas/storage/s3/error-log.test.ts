import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Harness, startHarness } from './testing/harness.js';

// An operator reading "s3 request failed" needs to know which operation failed, by the name
// metrics use (AWS's: GetObject, PutBucketCors …), not only the method and path.
const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
    done();
  },
});
let h: Harness;

beforeAll(async () => {
  h = await startHarness({}, { log: pino({ level: 'info' }, sink) });
  // A fault of ours, not the client's: the directory itself fails.
  h.directory.findBucket = async () => {
    throw new Error('directory unreachable');
  };
});
afterAll(async () => {
  await h?.close();
});

it('names the S3 operation in the line of a request that failed with a 500', async () => {
  const res = await fetch(`${h.endpoint}/some-bucket/some/key.txt`);
  expect(res.status).toBe(500);
  expect(await res.text()).toContain('<Code>InternalError</Code>');
  const failed = lines.filter((l) => l['msg'] === 's3 request failed');
  expect(failed).toHaveLength(1);
  expect(failed[0]).toMatchObject({
    operation: 'GetObject',
    method: 'GET',
    path: '/some-bucket/some/key.txt',
  });
  expect(failed[0]!['err']).toMatchObject({ message: 'directory unreachable' });
});
