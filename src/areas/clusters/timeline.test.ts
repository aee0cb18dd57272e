import { describe, expect, it } from 'vitest';
import {
  DELETE_SECONDS,
  PROVISIONING_SECONDS,
  PROVISIONING_STEPS,
  timelineOf,
  UPGRADE_SECONDS,
} from './lifecycle.js';

const created = 1_000_000;
const row = (changes: Partial<Parameters<typeof timelineOf>[0]> = {}) => ({
  created_at: created,
  delete_requested_at: null,
  upgrade_to: null,
  upgrade_started_at: null,
  ...changes,
});
const states = (t: ReturnType<typeof timelineOf>) => t.steps.map((s) => `${s.name}:${s.state}`);

describe('a cluster timeline', () => {
  it('walks the provisioning steps and says when the next one changes', () => {
    const t = timelineOf(row(), created + 6_000); // validate (5 s) done, network (20 s) running
    expect(t.operation).toBe('provision');
    expect(t.steps).toHaveLength(PROVISIONING_STEPS.length);
    expect(states(t).slice(0, 3)).toEqual(['validate:done', 'network:current', 'gateway:pending']);
    expect(t.next_change_in_ms).toBe(19_000);
    const ready = timelineOf(row(), created + PROVISIONING_SECONDS * 1000);
    expect(ready.steps.every((s) => s.state === 'done')).toBe(true);
    expect(ready.next_change_in_ms).toBeNull();
  });

  it('shows a fault at its step and stops moving', () => {
    const t = timelineOf(row({ fault: 'error', fault_step: 'gateway' }), created + 40_000);
    expect(states(t).slice(0, 4)).toEqual([
      'validate:done',
      'network:done',
      'gateway:failed',
      'peering:pending',
    ]);
    expect(t.next_change_in_ms).toBeNull();
  });

  it('shows an upgrade as its backup then the roll, and a deletion as teardown', () => {
    const started = created + PROVISIONING_SECONDS * 1000 + 60_000;
    const up = timelineOf(row({ upgrade_to: '1.31', upgrade_started_at: started }), started + 31_000);
    expect(states(up)).toEqual(['backup:done', 'upgrade:current']);
    expect(up.next_change_in_ms).toBe(UPGRADE_SECONDS * 1000 - 31_000);
    const del = timelineOf(row({ delete_requested_at: started }), started + 1000);
    expect(del.operation).toBe('delete');
    expect(states(del)).toEqual(['teardown:current']);
    expect(del.next_change_in_ms).toBe(DELETE_SECONDS * 1000 - 1000);
  });
});
