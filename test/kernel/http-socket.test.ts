import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TestFjord } from '../helpers/fjord.js';

/** What only a real socket shows: requests Node's HTTP parser refuses before Fastify sees them. */
let t: TestFjord;
beforeAll(async () => {
  t = await TestFjord.create({ FJORD_API_PORT: '0' });
  await t.fjord.start(['api']);
});
afterAll(() => t.close());

function raw(request: string): Promise<string> {
  const { hostname, port } = new URL(t.kernel.baseUrl());
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let out = '';
    socket.on('data', (d) => {
      out += d;
    });
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

it('answers headers over 16 KB with 431 in the error shape, and closes', async () => {
  const answer = await raw(`GET /v1/regions HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  expect(answer).toMatch(/^HTTP\/1\.1 431 /);
  expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
    detail: { code: 'headers_too_large', message: expect.any(String) },
  });
});

it('answers a malformed request line with 400 in the error shape', async () => {
  const answer = await raw('NOT A REQUEST\r\n\r\n');
  expect(answer).toMatch(/^HTTP\/1\.1 400 /);
  expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).detail.code).toBe('bad_request');
});
