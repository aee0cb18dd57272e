import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DatabasesService } from '../../src/areas/databases/service.js';
import { TestFjord } from '../helpers/fjord.js';
import { dbCustomer } from './databases-fixtures.js';

/**
 * Requests that arrive together: the quota and the name are decided by the store, under the
 * customer's lock, before the server is asked for anything. The simulated engine is slowed so
 * that every request is inside `create` at once.
 */
let t: TestFjord;
beforeAll(async () => {
  t = await TestFjord.create();
  const service = t.fjord.areas.get('databases')!.service as DatabasesService;
  for (const dbType of ['postgresql', 'mariadb'] as const) {
    const driver = await service.driver(dbType);
    const create = driver.create.bind(driver);
    driver.create = async (db, password) => {
      await new Promise((res) => setTimeout(res, 30));
      return create(db, password);
    };
  }
});
afterAll(async () => {
  await t?.close();
});

const create = (key: string, body: Record<string, unknown>) =>
  t.request('POST', '/v1/databases', { key, body: { db_type: 'postgresql', ...body } });

it('lets no more databases through the plan quota than it allows, however many ask at once', async () => {
  const c = await dbCustomer(t, 'free'); // 3 databases
  const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => create(c.key, { db_name: `q${i}` })));
  expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 403, 403, 403]);
  const list = await t.request('GET', '/v1/databases', { key: c.key });
  expect(list.text.match(/"technical_name"/g)).toHaveLength(3);
});

it('creates one database for one name asked for at once: form A gets 409, form B the winner', async () => {
  const c = await dbCustomer(t);
  const a = await Promise.all(Array.from({ length: 4 }, () => create(c.key, { db_name: 'same' })));
  expect(a.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
  const b = await Promise.all(Array.from({ length: 4 }, () => create(c.key, { requested_name: 'shared' })));
  expect(b.map((r) => r.status).sort()).toEqual([200, 200, 200, 201]);
  expect(new Set(b.map((r) => r.body.db_name)).size).toBe(1);
  expect(b.filter((r) => r.body.password !== null)).toHaveLength(1);
});

it('gives a failed server create its quota place back', async () => {
  const c = await dbCustomer(t, 'free');
  const service = t.fjord.areas.get('databases')!.service as DatabasesService;
  const driver = await service.driver('mariadb');
  const ok = driver.create.bind(driver);
  driver.create = async () => {
    throw new Error('Access denied for user');
  };
  const failed = await create(c.key, { db_type: 'mariadb', db_name: 'nope' });
  driver.create = ok;
  expect(failed.status).toBe(502);
  for (let i = 0; i < 3; i++) expect((await create(c.key, { db_name: `after${i}` })).status).toBe(201);
  const list = await t.request('GET', '/v1/databases', { key: c.key });
  expect(list.text).not.toContain('nope');
});
