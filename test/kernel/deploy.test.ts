import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VARIABLES } from '../../src/config/variables.js';

/**
 * The deployment files cannot be applied here (no cluster, no image registry), so they are
 * checked against the code instead: every role has a Deployment and a unit instance works for
 * it, and every FJORD_* variable they set exists.
 */
const file = (path: string) => readFileSync(new URL(`../../deploy/${path}`, import.meta.url), 'utf8');
const ROLES = VARIABLES.FJORD_ROLES.values as readonly string[];
const repoFile = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
/** Node's flags for a server, as `npm start` gives them (docs/configuration.md, "Node's heap at start"). */
const START_FLAGS = (JSON.parse(repoFile('package.json')) as { scripts: { start: string } }).scripts.start
  .split(/\s+/)
  .filter((word) => word.startsWith('--'));

describe('deployment files', () => {
  it('run every role as a Kubernetes Deployment of its own', () => {
    const manifests = file('kubernetes/fjord.yaml').split(/^---$/m);
    for (const role of ROLES) {
      const deployment = manifests.find(
        (m) => /kind: Deployment/.test(m) && new RegExp(`name: fjord-${role}\\b`).test(m),
      );
      expect(deployment, role).toBeDefined();
      expect(deployment!).toContain(`args: [start, --roles, ${role}]`);
    }
  });

  it('name only FJORD_* variables Fjord reads', () => {
    const text = [file('kubernetes/fjord.yaml'), file('Containerfile'), file('systemd/fjord@.service')].join(
      '\n',
    );
    const named = new Set(text.match(/FJORD_[A-Z0-9_]+/g));
    expect(named.size).toBeGreaterThan(5);
    for (const name of named) expect(VARIABLES, name).toHaveProperty(name);
  });

  it('start the role the systemd instance names', () => {
    const unit = file('systemd/fjord@.service');
    expect(unit).toContain(`ExecStart=/usr/bin/node ${START_FLAGS.join(' ')} bin/fjord.js start --roles %i`);
    expect(unit).toMatch(/^KillSignal=SIGTERM$/m);
  });

  it('give Node the same flags as `npm start`, wherever a server is started from', () => {
    expect(START_FLAGS).toContain('--initial-heap-size=128');
    const quoted = START_FLAGS.map((f) => `"${f}"`).join(', ');
    expect(file('Containerfile')).toContain(
      `ENTRYPOINT ["/usr/bin/tini", "--", "node", ${quoted}, "/opt/fjord/bin/fjord.js"]`,
    );
    expect(repoFile('bin/fjord.js').split('\n')[0]).toBe(`#!/usr/bin/env -S node ${START_FLAGS.join(' ')}`);
  });
});
