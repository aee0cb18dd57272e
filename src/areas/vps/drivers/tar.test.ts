import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTar, type TarEntry, writeTar } from './tar.js';

const deep = `disk/${'d'.repeat(60)}/${'e'.repeat(60)}/notes.txt`;
const entries: TarEntry[] = [
  { name: 'fjord-backup.json', type: 'file', mode: 0o644, mtime: 1_700_000_000, data: Buffer.from('{}\n') },
  { name: 'disk', type: 'dir', mode: 0o755, mtime: 1_700_000_000 },
  { name: deep, type: 'file', mode: 0o600, mtime: 1_700_000_000, data: Buffer.alloc(1000, 7) },
  { name: 'disk/empty', type: 'file', mode: 0o644, mtime: 1_700_000_000, data: Buffer.alloc(0) },
];

describe('tar archives of server backups', () => {
  it('round-trips files and directories, names past 100 bytes included', () => {
    const back = readTar(writeTar(entries));
    expect(back.map((e) => [e.name, e.type, e.mode, e.data?.length ?? null])).toEqual([
      ['fjord-backup.json', 'file', 0o644, 3],
      ['disk', 'dir', 0o755, null],
      [deep, 'file', 0o600, 1000],
      ['disk/empty', 'file', 0o644, 0],
    ]);
  });

  it('is read by GNU tar', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fjord-tar-'));
    try {
      writeFileSync(join(dir, 'a.tar'), writeTar(entries));
      const r = spawnSync('tar', ['-tf', join(dir, 'a.tar')], { encoding: 'utf8' });
      if (r.error) return; // no tar on this machine
      expect(r.status).toBe(0);
      expect(r.stdout.trim().split('\n')).toEqual(['fjord-backup.json', 'disk/', deep, 'disk/empty']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses damaged headers, truncated archives and names that leave the directory', () => {
    const good = writeTar(entries);
    const damaged = Buffer.from(good);
    damaged[10]! ^= 1;
    expect(() => readTar(damaged)).toThrow(/damaged/);
    expect(() => readTar(good.subarray(0, 1024))).toThrow(/truncated/);
    const leaving = writeTar([
      { name: '../etc/passwd', type: 'file', mode: 0o644, mtime: 0, data: Buffer.from('x') },
    ]);
    expect(() => readTar(leaving)).toThrow(/unsafe/);
  });
});
