import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claimOwnership, OwnedByAnother } from './ownership.js';

/** Tries to claim `file` from a separate node process: "claimed" or "refused <pid>". */
const claimFromAnotherProcess = (file: string) =>
  execFileSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      `import('${join(import.meta.dirname, 'ownership.ts')}').then(({ claimOwnership, OwnedByAnother }) => {
        try { claimOwnership(${JSON.stringify(file)}); console.log('claimed'); }
        catch (e) { console.log(e instanceof OwnedByAnother ? 'refused ' + e.pid : 'error ' + e.message); }
      })`,
    ],
    { encoding: 'utf8' },
  ).trim();

describe('claimOwnership', () => {
  it('refuses a second process while the owner lives, and lets it in once released', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'fjord-owner-')), 'owner.pid');
    const release = claimOwnership(file);
    expect(claimFromAnotherProcess(file)).toBe(`refused ${process.pid}`);
    // Claiming again from the owner is fine.
    claimOwnership(file);
    release();
    expect(existsSync(file)).toBe(false);
    expect(claimFromAnotherProcess(file)).toBe('claimed');
  });

  it('takes over from a dead owner, or from a pid reused by another process', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'fjord-owner-')), 'owner.pid');
    // The child claimed and exited without releasing, as after kill -9.
    expect(claimFromAnotherProcess(file)).toBe('claimed');
    const release = claimOwnership(file);
    release();
    // A live pid (ours) with another start time is not the owner.
    writeFileSync(file, `${process.pid === 1 ? 2 : 1} 12345\n`);
    expect(() => claimOwnership(file)).not.toThrow(OwnedByAnother);
  });
});
