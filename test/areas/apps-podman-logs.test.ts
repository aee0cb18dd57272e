import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import type { TestCustomer, TestFjord } from '../helpers/fjord.js';
import {
  buildBusyboxImage,
  PODMAN,
  podmanFjord,
  podmanSkipReason,
  removeContainers,
  removeNetworks,
} from './apps-fixtures.js';

// fjord-test: one store (sqlite). One pass runs it: podman's log streams are its subject; the apps
// area's state is tested on both stores by apps-logs.test.ts.

/**
 * Following a real container's output (podman driver): stdout and stderr lines as they are
 * written, over Server-Sent Events; the stream ends when the instance stops, and no `podman logs
 * --follow` is left behind, whether the instance stopped or the client left. Skipped, with the
 * reason, where podman cannot run containers.
 */
const IMAGE = `localhost/fjord-apps-test/ticker:${process.pid}`;
const skipReason = podmanSkipReason();
if (skipReason) console.warn(`apps podman logs tier skipped: ${skipReason}`);

let t: TestFjord;
let a: TestCustomer;
let apiPort = 0;
const appIds: string[] = [];

/** `podman logs --follow` processes of a container (only looked at, never signalled here). */
function followers(container: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.includes(' logs --follow') && l.includes(container));
}

/** Reads an SSE response until `want` appears (or the stream ends, then says so). */
function sseReader(res: Response) {
  const reader = res.body!.getReader();
  const state = { text: '', ended: false };
  return {
    state,
    async until(want: string | RegExp) {
      const seen = () => (typeof want === 'string' ? state.text.includes(want) : want.test(state.text));
      while (!seen()) {
        const { value, done } = await reader.read();
        if (done) {
          state.ended = true;
          if (!seen()) throw new Error(`stream ended before ${want}: ${state.text}`);
          return;
        }
        state.text += Buffer.from(value).toString('utf8');
      }
    },
    /** Reads on until the server ends the stream. */
    async toEnd() {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        state.text += Buffer.from(value).toString('utf8');
      }
      state.ended = true;
    },
  };
}

describe.skipIf(skipReason !== null)('container apps logs (podman driver)', () => {
  beforeAll(async () => {
    buildBusyboxImage(
      IMAGE,
      'echo up > /www/index.html; (i=0; while true; do i=$((i+1)); echo tick $i; echo warn $i >&2; sleep 0.2; done) & exec /bin/busybox httpd -f -p $PORT -h /www',
    );
    ({ t, apiPort } = await podmanFjord());
    a = await t.customer();
  }, 120_000);
  afterAll(async () => {
    removeContainers(appIds);
    removeNetworks(t);
    await t?.close();
    try {
      execFileSync('podman', [...PODMAN, 'rmi', '-f', IMAGE], { stdio: 'pipe' });
    } catch {}
  });

  it('follows stdout and stderr as they are written, until the client leaves or the instance stops', async () => {
    const c = await t.request('POST', '/v1/apps', { key: a.pat, body: { name: 'ticker', image: IMAGE } });
    expect(c.status).toBe(201);
    const id = c.body.id as string;
    appIds.push(id);
    await eventually(async () => {
      const rev = await t.request('GET', `/v1/apps/${id}/revisions/1`, { key: a.pat });
      expect(rev.body.status, rev.body.status_message).toBe('ready');
    }, 60_000);
    const instance = (await t.request('GET', `/v1/apps/${id}/instances`, { key: a.pat })).body.instances[0]
      .id as string;
    const container = `fjord-app-${instance.replace(/-1$/, '')}`;
    const open = (query: string, signal?: AbortSignal) =>
      fetch(`http://127.0.0.1:${apiPort}/v1/apps/${id}/logs?follow=true&${query}`, {
        headers: { 'x-api-key': a.pat },
        signal,
      });

    // The last lines, by instance, count and the host's time.
    const last = (query: string) => t.request('GET', `/v1/apps/${id}/logs?${query}`, { key: a.pat });
    // The container writes two lines every 0.2 s from its start: wait until it has written more.
    await eventually(
      async () => expect((await last('since=1h')).body.lines.length).toBeGreaterThan(2),
      10_000,
    );
    const two = await last(`instance=${instance}&tail=2`);
    expect(two.body.lines).toHaveLength(2);
    expect(two.body.lines.every((l: { instance: string }) => l.instance === instance)).toBe(true);
    const later = new Date(Date.now() + 3600_000).toISOString();
    expect((await last(`since=${later}`)).body.lines).toEqual([]);

    // The client leaves: the follower goes with it.
    const leaving = new AbortController();
    const first = await open('tail=1', leaving.signal);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toContain('text/event-stream');
    const s1 = sseReader(first);
    await s1.until(/"stream":"stdout","text":"tick \d+"/);
    await s1.until(/"stream":"stderr","text":"warn \d+"/);
    const ticks = [...s1.state.text.matchAll(/"text":"tick (\d+)"/g)].map((m) => Number(m[1]));
    // New lines keep coming after the tail: the counter grows while the stream is open.
    const newest = Math.max(...ticks);
    await s1.until(`"text":"tick ${newest + 2}"`);
    expect(s1.state.text).toContain(`"instance":"${instance}"`);
    expect(followers(container)).toHaveLength(1);
    leaving.abort();
    await eventually(async () => expect(followers(container)).toEqual([]), 10_000);

    // One instance asked for, and the instance stops (the app is suspended): the stream ends.
    const second = await open(`tail=0&instance=${instance}`);
    const s2 = sseReader(second);
    await s2.until('tick');
    expect((await t.request('POST', `/v1/apps/${id}/suspend`, { key: a.pat })).body.status).toBe('suspended');
    await s2.until('event: end\ndata: {"reason":"stopped"}');
    await s2.toEnd();
    expect(s2.state.ended).toBe(true);
    await eventually(async () => expect(followers(container)).toEqual([]), 10_000);
  }, 180_000);
});
