import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/kernel/store/store.js';

/** Two processes on one SQLite file are two connections: each must hear the other's notices. */
describe('change notices across connections of one SQLite store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-notices-'));
  const path = join(dir, 'fjord.db');
  const stores: Store[] = [];
  afterAll(async () => {
    for (const s of stores) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = async () => {
    const s = await openStore({ store: { kind: 'sqlite', path } });
    stores.push(s);
    return s;
  };
  const next = (s: Store, channel: string) =>
    new Promise<string>((resolve) => {
      const off = s.subscribe(channel, (payload) => {
        off();
        resolve(payload);
      });
    });

  it('delivers a notice to the other connection, in order, and once to its own', async () => {
    const a = await open();
    const b = await open();
    const seenByA: string[] = [];
    a.subscribe('zones', (p) => seenByA.push(p));
    const seenByB: string[] = [];
    const bGotTwo = new Promise<void>((resolve) =>
      b.subscribe('zones', (p) => {
        seenByB.push(p);
        if (seenByB.length === 2) resolve();
      }),
    );
    await a.publish('zones', 'example.com');
    await a.publish('zones', 'example.net');
    await bGotTwo;
    expect(seenByB).toEqual(['example.com', 'example.net']);
    expect(seenByA).toEqual(['example.com', 'example.net']);
    const back = next(a, 'other');
    await b.publish('other', 'x');
    expect(await back).toBe('x');
  });

  it('does not replay notices written before a connection opened', async () => {
    const a = await open();
    await a.publish('late', 'old');
    const c = await open();
    const got: string[] = [];
    c.subscribe('late', (p) => got.push(p));
    const fresh = next(c, 'late');
    await a.publish('late', 'new');
    expect(await fresh).toBe('new');
    expect(got).toEqual(['new']);
  });
});
