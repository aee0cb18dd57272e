import { describe, expect, it } from 'vitest';
import { AREAS } from '../../src/areas/index.js';
import { defineArea, plugsFor } from '../../src/areas/wiring.js';
import { type AreaModule, orderAreas, WiringError } from '../../src/kernel/wiring.js';
import { TestFjord } from '../helpers/fjord.js';

const area = (name: string, needs: string[] = [], optional: string[] = []): AreaModule => ({
  name,
  needs,
  optional,
  setup: async () => ({ routes: [] }),
});

describe('area wiring', () => {
  it('orders areas after what they need, keeping the list order otherwise', () => {
    const order = orderAreas([area('b', ['a']), area('c', [], ['b', 'x']), area('a')]).map((a) => a.name);
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('refuses a missing need, naming who needs what', () => {
    expect(() => orderAreas([area('dyn', ['dns'])])).toThrow(/area "dyn" needs the "dns" area/);
  });

  it('refuses a cycle, naming it', () => {
    expect(() => orderAreas([area('a', ['b']), area('b', ['c']), area('c', ['a'])])).toThrow(
      /cycle: a → b → c → a/,
    );
    expect(() => orderAreas([area('a'), area('a')])).toThrow(WiringError);
  });

  it('the shipped list is complete: every need is met', () => {
    expect(() => orderAreas(AREAS)).not.toThrow();
  });

  it('a Fjord without the DNS area does not start, and says dynamic DNS needs it', async () => {
    await expect(TestFjord.create({}, { areas: AREAS.filter((a) => a.name !== 'dns') })).rejects.toThrow(
      /area "dyn" needs the "dns" area/,
    );
  });

  it('a Fjord without the storage area does not start, and says the databases area needs it', async () => {
    await expect(TestFjord.create({}, { areas: AREAS.filter((a) => a.name !== 'storage') })).rejects.toThrow(
      /area "databases" needs the "storage" area/,
    );
  });

  it('an area whose optional service is absent says so in its entries of /v1/account/services', async () => {
    const t = await TestFjord.create({}, { areas: AREAS.filter((a) => a.name !== 'contacts') });
    try {
      const c = await t.customer();
      const p = await t.request('POST', '/v1/sms/sender-profiles', {
        key: c.pat,
        body: { name: 'Main', sender_id: '+4791000001', allow_reply: true },
      });
      expect(p.status).toBe(201);
      const list = await t.request('GET', '/v1/account/services', { key: c.pat });
      const entries = (list.body.services ?? list.body) as { service_type: string; metadata: object }[];
      const sms = entries.find((e) => e.service_type === 'sms');
      expect(sms?.metadata).toMatchObject({ absent_optional_services: ['contacts'] });
    } finally {
      await t.close();
    }
  });

  it('vm_count of SSH keys comes from the areas plugged into account.ssh-key-usage', async () => {
    const servers = defineArea({
      name: 'test-servers',
      needs: ['account'],
      setup: () => ({
        routes: [],
        plugs: plugsFor({
          'account.ssh-key-usage': async (_customer, fingerprints) =>
            new Map(fingerprints.map((f) => [f, 2])),
        }),
      }),
    });
    const t = await TestFjord.create({}, { areas: [...AREAS, servers] });
    try {
      const c = await t.customer();
      const key =
        'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl test@fjord';
      const add = await t.request('POST', '/v1/account/ssh-keys', {
        key: c.pat,
        body: { name: 'laptop', public_key: key },
      });
      expect(add.status).toBe(201);
      const list = await t.request('GET', '/v1/account/ssh-keys', { key: c.pat });
      expect(list.body[0] ?? list.body.ssh_keys?.[0]).toMatchObject({ vm_count: 2 });
    } finally {
      await t.close();
    }
  });
});
