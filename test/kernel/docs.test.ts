import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ALL_SCOPES, SERVICES } from '../../src/kernel/auth/catalogue.js';
import { DEFAULT_RATE_LIMITS } from '../../src/kernel/limits/table.js';

const doc = (name: string) => readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8');

describe('the documentation lists what the code accepts', () => {
  it('docs/auth.md names every service and every scope', () => {
    const auth = doc('auth.md');
    for (const s of SERVICES) expect(auth, s).toContain(`\`${s}\``);
    for (const s of ALL_SCOPES) expect(auth, s).toContain(`\`${s}\``);
  });

  it('docs/rate-limits.md names every bucket', () => {
    const limits = doc('rate-limits.md');
    for (const bucket of Object.keys(DEFAULT_RATE_LIMITS)) expect(limits, bucket).toContain(`\`${bucket}\``);
  });
});
