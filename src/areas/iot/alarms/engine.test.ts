import { describe, expect, it } from 'vitest';
import type { Condition } from './conditions.js';
import { load } from './rule-index.js';
import type { IotRulesTable } from './tables.js';

const row = (severities: Record<string, Condition>, clear: Condition | null = null): IotRulesTable => ({
  id: 'r1',
  customer_id: 'c1',
  name: 'rule',
  description: null,
  enabled: 1,
  target_type: 'all',
  target_value: null,
  severities: JSON.stringify(severities),
  clear_condition: clear ? JSON.stringify(clear) : null,
  schedule: null,
  created_at: 0,
  updated_at: 0,
});

describe('which telemetry keys a rule reads (the engine indexes rules by them)', () => {
  it('reads the keys of every severity and of the clear condition, once each', () => {
    const r = load(
      row(
        {
          critical: {
            type: 'simple',
            filters: [
              { key: 'temp', operator: '>', value: 90 },
              { key: 'mode', source: 'attribute', operator: '==', value: 'on' },
            ],
          },
          warning: { type: 'repeating', count: 3, filters: [{ key: 'temp', operator: '>', value: 70 }] },
        },
        { type: 'simple', filters: [{ key: 'hum', operator: '<', value: 10 }] },
      ),
    );
    expect(r.keys).toEqual(['temp', 'hum']);
    expect(r.readsAttributes).toBe(true);
    expect(r.judged.map((j) => [j.severity, j.heldKey])).toEqual([
      ['critical', 'r1|critical'],
      ['warning', 'r1|warning'],
    ]);
  });

  it('is judged on every message when a condition reads attributes only', () => {
    const r = load(
      row({
        major: {
          type: 'simple',
          filters: [{ key: 'firmware_version', source: 'attribute', operator: '==', value: '1' }],
        },
        minor: { type: 'simple', filters: [{ key: 'temp', operator: '>', value: 1 }] },
      }),
    );
    expect(r.keys).toBeNull();
  });

  it('reads no key when it has only inactivity conditions (the clock judges those)', () => {
    const r = load(row({ major: { type: 'inactivity', inactivity_seconds: 600 } }));
    expect([r.keys, r.judged, r.clearsOnTelemetry]).toEqual([[], [], true]);
  });
});
