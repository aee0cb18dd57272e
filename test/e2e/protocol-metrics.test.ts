import { createSocket } from 'node:dgram';
import { ListBucketsCommand } from '@aws-sdk/client-s3';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DnsServer } from '../../src/areas/dns/server/index.js';
import { TestFjord } from '../helpers/fjord.js';
import { s3ClientFor } from '../helpers/s3.js';

/** S3 and DNS requests show in `/metrics` by protocol, operation and outcome, as API requests do. */
let t: TestFjord;
beforeAll(async () => {
  t = await TestFjord.create({ FJORD_S3_PORT: '0', FJORD_DNS_PORT: '0', FJORD_DNS_RRL_RATE: '0' });
  await t.fjord.start(['s3', 'dns']);
});
afterAll(() => t.close());

function askUdp(port: number, name: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    socket.once('message', (m) => {
      socket.close();
      resolve(m);
    });
    socket.once('error', reject);
    socket.send(
      dnsPacket.encode({ type: 'query', id: 9, questions: [{ type: 'AAAA', name }] }),
      port,
      '127.0.0.1',
    );
  });
}

it('counts S3 operations and DNS queries by operation and outcome', async () => {
  const c = await t.customer();
  const bucket = await t.request('POST', '/v1/storage/buckets', {
    key: c.pat,
    body: { bucket_name: `m-${Date.now().toString(36)}` },
  });
  const s3 = s3ClientFor(bucket.body);
  await s3.send(new ListBucketsCommand({})).catch(() => {});
  const dns = t.fjord.areas.get('dns')!.servers!.find((s) => s.role === 'dns') as DnsServer;
  await askUdp(dns.port()!, 'nowhere.example');

  const text = (await t.request('GET', '/metrics')).text;
  expect(text).toMatch(
    /fjord_protocol_request_duration_seconds_count\{protocol="s3",operation="ListBuckets",outcome="\d{3}"\} [1-9]/,
  );
  expect(text).toMatch(
    /fjord_protocol_request_duration_seconds_count\{protocol="dns-udp",operation="AAAA",outcome="REFUSED"\} 1/,
  );
  expect(text).toMatch(
    /fjord_protocol_bytes_total\{protocol="dns-udp",operation="AAAA",direction="in"\} [1-9]/,
  );
  // And the API's own metrics are still there.
  expect(text).toMatch(/fjord_http_request_duration_seconds_count/);
});

it('writes a request line per S3 request and per DNS query, with the customer, and samples a flood', async () => {
  const c = await t.customer();
  const bucket = await t.request('POST', '/v1/storage/buckets', {
    key: c.pat,
    body: { bucket_name: `l-${Date.now().toString(36)}` },
  });
  const s3 = s3ClientFor(bucket.body);
  await s3.send(new ListBucketsCommand({}));
  const lines = () =>
    t.logs
      .flatMap((l) => l.split('\n'))
      .flatMap((l) => (l ? [JSON.parse(l) as Record<string, unknown>] : []));
  const s3Line = lines().find((l) => l.msg === 'request' && l.protocol === 's3' && l.customer === c.id);
  expect(s3Line).toMatchObject({ role: 'protocol', op: 'ListBuckets', outcome: '200' });
  expect(s3Line!.id).toMatch(/^[0-9A-F]{16}$/);

  // 300 queries at once: at most 100 lines in any second, and a line counting the rest.
  const dns = t.fjord.areas.get('dns')!.servers!.find((s) => s.role === 'dns') as DnsServer;
  await Promise.all(Array.from({ length: 300 }, () => askUdp(dns.port()!, 'flood.example')));
  await new Promise((r) => setTimeout(r, 1100)); // the next second's first line reports the skipped
  await askUdp(dns.port()!, 'flood.example');
  const dnsLines = lines().filter((l) => l.protocol === 'dns-udp');
  const logged = dnsLines.filter((l) => l.msg === 'request').length;
  const skipped = dnsLines
    .filter((l) => l.msg === 'request lines left out (sampling)')
    .reduce((n, l) => n + Number(l.skipped), 0);
  expect(skipped).toBeGreaterThan(0);
  expect(logged).toBeLessThan(302);
  // Every query is either logged or counted: 1 in the test above, 300 and 1 here.
  expect(logged + skipped).toBe(302);
});
