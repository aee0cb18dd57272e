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

describe('the README tells the truth about what is served', () => {
  /** How the README's introduction names each area; a new area without a line here fails. */
  const PHRASES: Record<string, string> = {
    account: 'account and API keys',
    regions: 'regions',
    webhooks: 'webhooks',
    storage: 'object storage with an S3 data plane',
    databases: 'managed PostgreSQL and MariaDB databases',
    dns: 'DNS with an authoritative server',
    'domain-verification': 'domain verification',
    dyn: 'dynamic DNS',
    contacts: 'contacts',
    sms: 'SMS',
    verify: 'code verification',
    llm: 'language-model gateway',
    chatbot: 'chatbots',
    gpu: 'GPU jobs',
    live: 'live events',
    ip: 'IP intelligence',
    vps: 'virtual servers',
    clusters: 'managed Kubernetes clusters',
    iot: 'IoT devices',
    speech: 'speech transcription',
    apps: 'container apps',
  };

  it('names every area Fjord serves in its introduction, and no area as not built that is', async () => {
    const { AREAS } = await import('../../src/areas/index.js');
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const intro = readme
      .slice(readme.indexOf('Today it serves:'), readme.indexOf('## Quick start'))
      .replace(/\s+/g, ' ');
    const notBuilt = intro.split('. ').find((sentence) => sentence.includes('not built yet')) ?? '';
    for (const area of AREAS) {
      const phrase = PHRASES[area.name];
      expect(phrase, `add ${area.name} to the README's introduction and to this list`).toBeDefined();
      expect(intro, area.name).toContain(phrase!);
      expect(notBuilt.slice(0, 200).toLowerCase(), `${area.name} is served`).not.toContain(
        phrase!.toLowerCase(),
      );
    }
  });
});

it('the docs speak to users: no references to documents they do not have', async () => {
  const { readdirSync } = await import('node:fs');
  const files = [
    'README.md',
    ...readdirSync(new URL('../../docs/', import.meta.url)).map((f) => `docs/${f}`),
  ];
  for (const f of files.filter((x) => x.endsWith('.md'))) {
    const text = readFileSync(new URL(`../../${f}`, import.meta.url), 'utf8');
    const found = /\b(doc(ument)?s? [123]\b|the spec\b|spec's\b)/i.exec(text);
    expect(found?.[0], f).toBeUndefined();
  }
});

it('the generated tables of docs/ are rendered from the code as it is (npx tsx scripts/render-doc-tables.ts)', async () => {
  const { renderDocTables } = await import('../../scripts/lib/doc-tables.js');
  const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
  for (const [path, rendered] of renderDocTables(read)) expect(read(path), path).toBe(rendered);
});

it('operations.md and scaling.md give the process count test:cluster starts', () => {
  const test = readFileSync(new URL('../../test/e2e/cluster-scale-out.test.ts', import.meta.url), 'utf8');
  const beforeAll = test.slice(test.indexOf('beforeAll(async'), test.indexOf('lb = await startBalancer('));
  const roles = [...beforeAll.matchAll(/\bstart\('(\w+)'\)/g)].map((m) => m[1]!);
  const words = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
  const count = [...words, 'eleven', 'twelve', 'thirteen', 'fourteen'][roles.length]!;
  expect(roles.length).toBeGreaterThan(5);
  expect(doc('operations.md')).toContain(`and ${count} Fjord\nprocesses`);
  for (const role of new Set(roles)) {
    const n = roles.filter((r) => r === role).length;
    expect(doc('operations.md'), role).toContain(`${n} × \`${role}\``);
  }
  expect(doc('scaling.md')).toContain(`checks that ${count} processes`);
});
