import { describe, expect, it } from 'vitest';
import { Progress, pollUntil } from './wait.js';

describe('--wait progress', () => {
  it('rewrites one line on a terminal, with the status, the detail and the time so far', () => {
    const written: string[] = [];
    const p = new Progress((s) => written.push(s), true);
    p.update('provisioning', 'network');
    p.update('provisioning', 'network');
    p.done('running');
    expect(written).toHaveLength(3);
    const clear = '\r\u001b[K'; // back to the line's start, then erase it
    for (const w of written.slice(0, 2)) {
      expect(w.startsWith(clear)).toBe(true);
      expect(w.slice(clear.length)).toMatch(/^. provisioning · network · \d+s$/);
    }
    expect(written[2]!.startsWith(`${clear}running after `)).toBe(true);
  });

  it('prints a plain line only when the state changes elsewhere', async () => {
    const written: string[] = [];
    const answers = ['queued', 'queued', 'processing', 'processing', 'completed'];
    let i = 0;
    const final = await pollUntil({
      first: answers[0]!,
      read: async () => answers[++i]!,
      status: (a) => a,
      isDone: (s) => s === 'completed',
      progress: new Progress((s) => written.push(s), false),
      intervalMs: 0,
    });
    expect(final).toBe('completed');
    expect(written.join('')).toBe('queued\nprocessing\ncompleted\n');
  });
});
