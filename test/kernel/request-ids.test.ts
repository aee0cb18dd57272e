import { expect, it } from 'vitest';
import { nextRequestId } from '../../src/kernel/http/app.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

it('makes request ids that are v4 UUIDs and never repeat, across a change of random base', () => {
  const seen = new Set<string>();
  // More than one base's worth (65 536), so the switch to a fresh base is crossed.
  for (let i = 0; i < 140_000; i++) {
    const id = nextRequestId();
    if (!UUID_V4.test(id)) throw new Error(`not a v4 UUID: ${id}`);
    seen.add(id);
  }
  expect(seen.size).toBe(140_000);
  expect(new Set([...seen].map((id) => id.slice(0, 32))).size).toBeGreaterThanOrEqual(2);
});
