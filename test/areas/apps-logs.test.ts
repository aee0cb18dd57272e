import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import type { TestCustomer, TestFjord } from '../helpers/fjord.js';
import { simulatedFjord } from './apps-fixtures.js';

/**
 * Container apps' logs with the simulated driver: the last lines filtered by instance, time and
 * count, and the follow stream (Server-Sent Events) that ends when the instance stops or the client
 * leaves.
 */
let t: TestFjord;
let a: TestCustomer;
let port = 0;

beforeAll(async () => {
  t = await simulatedFjord();
  await t.fjord.http.listen({ port: 0, host: '127.0.0.1' });
  port = (t.fjord.http.server.address() as AddressInfo).port;
});
beforeEach(async () => {
  a = await t.customer();
});
afterAll(() => t.close());

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}
/** The events of an SSE body (comments, the keep-alives, left out). */
function events(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() && !block.startsWith(':'))
    .map((block) => {
      const fields = Object.fromEntries(
        block.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
      );
      return { event: fields.event ?? 'message', data: JSON.parse(fields.data ?? 'null') };
    });
}

const createApp = async (name: string) => {
  const c = await t.request('POST', '/v1/apps', {
    key: a.pat,
    body: { name, image: 'ghcr.io/team/web:1', idle_timeout_seconds: 60 },
  });
  expect(c.status).toBe(201);
  return c.body.id as string;
};

describe('container apps logs (simulated driver)', () => {
  it('answers the last lines, by instance, time and count', async () => {
    const id = await createApp('web');
    await t.advance(10);
    const all = await t.request('GET', `/v1/apps/${id}/logs`, { key: a.pat });
    expect(all.status).toBe(200);
    expect(all.body.lines.map((l: { text: string }) => l.text)).toEqual([
      '[simulated] pulling ghcr.io/team/web:1',
      '[simulated] starting an instance listening on port 8080',
      '[simulated] health check GET / passed',
    ]);
    const instance = (await t.request('GET', `/v1/apps/${id}/instances`, { key: a.pat })).body.instances[0]
      .id;
    expect(all.body.lines[0]).toMatchObject({ instance, revision_number: 1, stream: 'stdout' });

    const q = (query: string) => t.request('GET', `/v1/apps/${id}/logs?${query}`, { key: a.pat });
    expect((await q(`instance=${instance}&tail=1`)).body.lines).toHaveLength(1);
    expect((await q('tail=0')).body.lines).toEqual([]);
    // The health check passed 10 s ago on the clock; the deploy started 10 s before that.
    expect((await q('since=5s')).body.lines).toHaveLength(1);
    expect((await q(`since=${all.body.lines[2].time}`)).body.lines).toHaveLength(1);
    expect((await q('since=1h')).body.lines).toHaveLength(3);

    expect((await q('instance=nope-1')).body.detail.code).toBe('instance_not_found');
    expect((await q('since=yesterday')).status).toBe(422);
    expect((await q('since=2026-13-45T99:00:00Z')).body.detail.code).toBe('invalid_since');
    expect((await q('tail=1001')).status).toBe(422);
    expect((await q('follow=maybe')).status).toBe(422);
  });

  it('follows an instance from its deploy until it scales to zero, then ends the stream', async () => {
    const id = await createApp('follow');
    // inject collects the whole stream: it answers once the stream has ended.
    const streamed = t.request('GET', `/v1/apps/${id}/logs?follow=true`, { key: a.pat });
    await t.advance(10);
    await t.advance(61);
    const r = await streamed;
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toContain('text/event-stream');
    const ev = events(r.text);
    expect(ev.map((e) => [e.event, e.data.text ?? e.data.reason])).toEqual([
      ['message', '[simulated] pulling ghcr.io/team/web:1'],
      ['message', '[simulated] starting an instance listening on port 8080'],
      ['message', '[simulated] health check GET / passed'],
      ['end', 'stopped'],
    ]);

    // Nothing runs now: the stream tells the last lines and ends at once.
    const idle = await t.request('GET', `/v1/apps/${id}/logs?follow=true&tail=1`, { key: a.pat });
    expect(events(idle.text).map((e) => e.event)).toEqual(['message', 'end']);
    expect(events(idle.text)[1]!.data).toEqual({ reason: 'no_instances' });
    // Errors come before a stream opens, as JSON.
    const missing = await t.request('GET', `/v1/apps/nope/logs?follow=true`, { key: a.pat });
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toContain('application/json');
  });

  it('streams over a socket as lines come, and stops reading when the client leaves', async () => {
    const id = await createApp('socket');
    const controller = new AbortController();
    const res = await fetch(`http://127.0.0.1:${port}/v1/apps/${id}/logs?follow=true`, {
      headers: { 'x-api-key': a.pat },
      signal: controller.signal,
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    let text = '';
    const until = async (want: string) => {
      while (!text.includes(want)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${want}: ${text}`);
        text += Buffer.from(value).toString('utf8');
      }
    };
    await until('starting an instance');
    expect(text).not.toContain('passed');
    await t.advance(10);
    await until('health check GET / passed');
    controller.abort();
    // The server has let go of the connection: no poll is left reading the app.
    await eventually(async () => {
      const open = await new Promise<number>((resolve, reject) =>
        t.fjord.http.server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
      );
      expect(open).toBe(0);
    }, 10_000);
  });
});
