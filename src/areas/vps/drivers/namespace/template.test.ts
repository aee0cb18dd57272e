import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

// debootstrap stands in as a function that lays out what the template check looks for.
vi.mock('./host.js', () => ({
  run: vi.fn(async (_cmd: string, args: string[]) => {
    if (args[1]?.includes('debootstrap')) {
      const target = args[5]!; // sh -c SCRIPT sh PACKAGES SUITE TARGET MIRROR
      mkdirSync(join(target, 'usr/sbin'), { recursive: true });
      writeFileSync(join(target, 'usr/sbin/sshd'), '');
    }
    return '';
  }),
}));

const { TemplateCache } = await import('./template.js');
const dir = mkdtempSync(join(tmpdir(), 'fjord-template-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the VPS template build', () => {
  it('says what it does and how long it took, from start to ready', async () => {
    const lines: { msg: string; seconds: number; template: string }[] = [];
    const log = {
      info: (o: { seconds: number; template: string }, msg: string) => lines.push({ ...o, msg }),
    };
    const cache = new TemplateCache(dir, 'http://mirror.invalid/debian', log as never);
    const root = await cache.ensure('debian-12');
    expect(root).toBe(cache.rootOf('debian-12'));
    expect(lines.map((l) => l.msg)).toEqual([
      'vps template: building with debootstrap (about a minute; once per template)',
      'vps template: debootstrap done; removing host keys and the package cache',
      'vps template: ready',
    ]);
    expect(lines.every((l) => l.template === 'debian-12' && l.seconds >= 0)).toBe(true);
  });
});
