import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { expect, it, vi } from 'vitest';
import { isAlive } from './orphans.js';

it('counts a zombie as ended: its parent does not reap it, and waiting for it would never end', async () => {
  // A parent that never waits for the child it forks (perl is in every Debian: perl-base).
  const parent = spawn('perl', ['-e', '$| = 1; my $p = fork; exit 0 unless $p; print "$p\\n"; sleep 30'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  try {
    const [line] = (await once(parent.stdout, 'data')) as [Buffer];
    const zombie = Number(line.toString().trim());
    await vi.waitFor(() => expect(readFileSync(`/proc/${zombie}/stat`, 'utf8')).toMatch(/\) Z /), {
      timeout: 10_000,
    });
    expect(isAlive(zombie)).toBe(false);
    expect(isAlive(parent.pid!)).toBe(true);
  } finally {
    parent.kill('SIGKILL');
  }
  await once(parent, 'exit');
  expect(isAlive(parent.pid!)).toBe(false);
});
