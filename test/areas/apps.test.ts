import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestCustomer, TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';
import { simulatedFjord } from './apps-fixtures.js';

/**
 * Container apps with the simulated driver: every route's answer and refusals, deploys that move
 * the traffic only when healthy, rollback, scale to zero on the clock, the app quota under
 * concurrent creates, and tenant isolation.
 */
let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;

beforeAll(async () => {
  t = await simulatedFjord();
  b = await t.customer();
});
// Each test starts with a customer of its own: the free plan allows three apps.
beforeEach(async () => {
  a = await t.customer();
});
afterAll(() => t.close());

const create = (body: Record<string, unknown>, key = a.pat) => t.request('POST', '/v1/apps', { key, body });
const get = (app: string, key = a.pat) => t.request('GET', `/v1/apps/${app}`, { key });
const deploy = (app: string, body: Record<string, unknown>, key = a.pat) =>
  t.request('POST', `/v1/apps/${app}/revisions`, { key, body });
const post = (app: string, action: string, key = a.pat, body?: unknown) =>
  t.request('POST', `/v1/apps/${app}/${action}`, { key, body });
const instances = async (app: string, key = a.pat) =>
  (await t.request('GET', `/v1/apps/${app}/instances`, { key })).body as {
    instances: { id: string; revision_number: number; state: string }[];
    total: number;
  };

describe('container apps (simulated driver)', () => {
  it('lists plans publicly', async () => {
    const r = await t.request('GET', '/v1/apps/plans');
    expect(r.status).toBe(200);
    expect(r.body.plans).toContainEqual({
      plan_code: 'micro',
      name: expect.any(String),
      cpu: 0.25,
      memory_mb: 256,
      max_processes: 128,
    });
  });

  it('creates an app that deploys, then runs, then scales to zero after the idle timeout', async () => {
    const c = await create({
      name: 'web',
      image: 'ghcr.io/team/web:1.0',
      env: { LOG_LEVEL: 'info' },
      secrets: { DATABASE_URL: 'postgres://u:hunter2@db/x' },
      idle_timeout_seconds: 60,
    });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({
      name: 'web',
      region: 'oslo',
      url: `https://web-${a.shortId.toLowerCase()}.apps.fjord.test`,
      status: 'deploying',
      current_revision: null,
      latest_revision: { number: 1, status: 'deploying' },
      driver: 'simulated',
      simulated: true,
    });
    expect(c.body.status_message).toContain('Simulated');
    expect(c.text).not.toContain('hunter2');
    const id = c.body.id as string;
    const starting = await instances(id);
    expect(starting.instances).toEqual([expect.objectContaining({ revision_number: 1, state: 'starting' })]);

    await t.advance(10);
    const running = await get('web');
    expect(running.body).toMatchObject({
      id,
      status: 'running',
      current_revision: { number: 1, status: 'ready' },
      instances_running: 1,
    });
    expect((await instances(id)).instances).toEqual([
      expect.objectContaining({ id: expect.stringMatching(/-1$/), revision_number: 1, state: 'running' }),
    ]);

    const rev = await t.request('GET', `/v1/apps/web/revisions/1`, { key: a.pat });
    expect(rev.status).toBe(200);
    expect(rev.body).toMatchObject({
      number: 1,
      status: 'ready',
      serving: true,
      env: { LOG_LEVEL: 'info' },
      secret_names: ['DATABASE_URL'],
      plan_code: 'micro',
      cpu: 0.25,
      memory_mb: 256,
      port: 8080,
      health_check: { path: '/', interval_seconds: 5, timeout_seconds: 2, failure_threshold: 3 },
    });
    expect(rev.text).not.toContain('hunter2');
    expect(rev.body.status_message).toContain('Simulated');

    await t.advance(61);
    const idle = await get(id);
    expect(idle.body).toMatchObject({ status: 'scaled_to_zero', instances_running: 0 });
    expect((await instances(id)).total).toBe(0);

    // A request (wake) cold-starts one instance, which starts and then runs, and idles out again.
    const woken = await post(id, 'wake');
    expect(woken.status).toBe(200);
    expect(woken.body).toMatchObject({ status: 'running', instances_running: 1 });
    expect((await instances(id)).instances[0]!.state).toBe('starting');
    await t.advance(2);
    expect((await instances(id)).instances[0]!.state).toBe('running');
    await t.advance(59);
    expect((await get(id)).body.status).toBe('scaled_to_zero');
  });

  it('keeps min_instances running however idle the app is', async () => {
    const c = await create({ name: 'always-on', image: 'web:1', min_instances: 2, max_instances: 3 });
    await t.advance(10_000);
    const r = await get(c.body.id);
    expect(r.body).toMatchObject({
      status: 'running',
      instances_running: 2,
      min_instances: 2,
      max_instances: 3,
    });
    expect((await instances(c.body.id)).total).toBe(2);
  });

  it('keeps the previous revision serving while a broken one fails its health check, and rolls back', async () => {
    const c = await create({ name: 'shop', image: 'shop:1', secrets: { TOKEN: 's3cret' } });
    const id = c.body.id as string;
    await t.advance(10);
    // A deploy copies what it does not name, secrets included.
    const two = await deploy(id, { image: 'shop:2', env: { MODE: 'two' } });
    expect(two.status).toBe(201);
    expect(two.body).toMatchObject({
      number: 2,
      status: 'deploying',
      serving: false,
      image: 'shop:2',
      env: { MODE: 'two' },
      secret_names: ['TOKEN'],
    });
    const during = await get(id);
    expect(during.body).toMatchObject({
      status: 'deploying',
      current_revision: { number: 1 },
      latest_revision: { number: 2, status: 'deploying' },
    });
    expect(during.body.status_message).toContain('revision 1 keeps serving');
    expect((await deploy(id, { image: 'shop:3' })).body.detail).toMatchObject({ code: 'deploy_in_progress' });
    expect((await post(id, 'rollback', a.pat, { revision_id: '1' })).body.detail).toMatchObject({
      code: 'deploy_in_progress',
    });
    await t.advance(10);
    expect((await get(id)).body).toMatchObject({ status: 'running', current_revision: { number: 2 } });

    const broken = await deploy(id, { image: 'shop:broken' });
    expect(broken.status).toBe(201);
    await t.advance(10);
    expect((await get(id)).body).toMatchObject({ status: 'deploying', current_revision: { number: 2 } });
    await t.advance(15);
    const after = await get(id);
    expect(after.body).toMatchObject({
      status: 'running',
      current_revision: { number: 2, status: 'ready' },
      latest_revision: { number: 3, status: 'failed' },
    });
    expect(after.body.status_message).toContain('Revision 3 failed');
    const failed = await t.request('GET', `/v1/apps/${id}/revisions/3`, { key: a.pat });
    expect(failed.body).toMatchObject({ status: 'failed', serving: false, failed_at: expect.any(String) });
    expect(failed.body.status_message).toContain('Health check GET /');

    const logs = await t.request('GET', `/v1/apps/${id}/logs?lines=3`, { key: a.pat });
    expect(logs.status).toBe(200);
    expect(logs.body.simulated).toBe(true);
    expect(logs.body.lines).toHaveLength(3);
    expect(logs.body.lines.at(-1)).toMatchObject({ revision_number: 3, stream: 'stderr' });
    expect(logs.body.lines.at(-1).text).toContain('[simulated] Health check GET /');
    expect((await t.request('GET', `/v1/apps/${id}/logs?lines=0`, { key: a.pat })).status).toBe(422);

    const list = await t.request('GET', `/v1/apps/${id}/revisions`, { key: a.pat });
    expect(list.body.total).toBe(3);
    expect(
      list.body.revisions.map((r: { number: number; serving: boolean }) => [r.number, r.serving]),
    ).toEqual([
      [3, false],
      [2, true],
      [1, false],
    ]);

    // Rollback: to a failed revision, to the serving one, to an unknown one; then to revision 1.
    expect((await post(id, 'rollback', a.pat, { revision_id: '3' })).body.detail).toMatchObject({
      code: 'revision_not_ready',
      status: 'failed',
    });
    expect((await post(id, 'rollback', a.pat, { revision_id: '2' })).body.detail).toMatchObject({
      code: 'already_serving',
    });
    expect((await post(id, 'rollback', a.pat, { revision_id: '99' })).status).toBe(404);
    const rev1 = list.body.revisions[2].id as string;
    const back = await post(id, 'rollback', a.pat, { revision_id: rev1 });
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ status: 'running', current_revision: { id: rev1, number: 1 } });
    expect((await instances(id)).instances).toEqual([
      expect.objectContaining({ revision_number: 1, state: 'starting' }),
    ]);
    await t.advance(2);
    expect((await instances(id)).instances[0]!.state).toBe('running');
  });

  it('is failed when its first revision fails, and recovers with a good deploy', async () => {
    const c = await create({ name: 'bad-start', image: 'x:broken', health_check: { path: '/healthz' } });
    await t.advance(25);
    const r = await get(c.body.id);
    expect(r.body).toMatchObject({ status: 'failed', current_revision: null, instances_running: 0 });
    expect(r.body.status_message).toContain('/healthz');
    expect((await post(c.body.id, 'wake')).body.detail).toMatchObject({
      code: 'invalid_state',
      status: 'failed',
    });
    expect((await deploy(c.body.id, { image: 'x:fixed' })).status).toBe(201);
    await t.advance(10);
    expect((await get(c.body.id)).body).toMatchObject({ status: 'running', current_revision: { number: 2 } });
  });

  it('suspends and resumes', async () => {
    const c = await create({ name: 'pause', image: 'p:1', min_instances: 1 });
    const id = c.body.id as string;
    await t.advance(10);
    const s = await post(id, 'suspend');
    expect(s.body).toMatchObject({ status: 'suspended', instances_running: 0 });
    expect((await post(id, 'suspend')).body.detail).toMatchObject({
      code: 'invalid_state',
      status: 'suspended',
    });
    expect((await post(id, 'wake')).body.detail).toMatchObject({
      code: 'invalid_state',
      status: 'suspended',
    });
    const r = await post(id, 'resume');
    expect(r.body).toMatchObject({ status: 'running', instances_running: 1 });
    expect((await post(id, 'resume')).body.detail).toMatchObject({
      code: 'invalid_state',
      status: 'running',
    });
  });

  it('refuses bad input with the field that is wrong', async () => {
    const cases: [Record<string, unknown>, number, string | null][] = [
      [{ name: 'Bad_Name', image: 'x:1' }, 422, 'invalid_name'],
      [{ name: '-x', image: 'x:1' }, 422, 'invalid_name'],
      [{ name: 'ok', image: 'x:1', plan_code: 'huge' }, 422, 'unknown_plan'],
      [{ name: 'ok', image: 'x:1', region: 'mars' }, 422, 'unknown_region'],
      [{ name: 'ok', image: 'x:1', env: { 'BAD-NAME': 'v' } }, 422, 'invalid_env'],
      [{ name: 'ok', image: 'x:1', env: { A: '1' }, secrets: { A: '2' } }, 422, 'invalid_env'],
      [{ name: 'ok', image: 'x:1', min_instances: 3, max_instances: 2 }, 422, 'invalid_scaling'],
      [{ name: 'ok', image: 'x:1', max_instances: 4 }, 422, 'max_instances_exceeded'],
      [{ name: 'ok', image: 'x:1', port: 0 }, 422, null],
      [{ name: 'ok' }, 422, null],
      [{ name: 'ok', image: 'x:1', surprise: true }, 422, null],
    ];
    const c = await t.customer();
    for (const [body, status, code] of cases) {
      const r = await create(body, c.pat);
      expect(r.status, JSON.stringify(body)).toBe(status);
      if (code) expect(r.body.detail.code, JSON.stringify(body)).toBe(code);
    }
    expect((await t.request('GET', '/v1/apps', { key: c.pat })).body.total).toBe(0);
    expect((await create({ name: 'dup', image: 'x:1' }, c.pat)).status).toBe(201);
    expect((await create({ name: 'dup', image: 'x:2' }, c.pat)).body.detail).toMatchObject({
      code: 'app_exists',
    });
    expect((await deploy('dup', { plan_code: 'nope' }, c.pat)).body.detail).toMatchObject({
      code: 'unknown_plan',
    });
    expect((await get('nope', c.pat)).body.detail).toMatchObject({ code: 'app_not_found' });
    expect((await t.request('GET', '/v1/apps/dup/revisions/7', { key: c.pat })).body.detail).toMatchObject({
      code: 'revision_not_found',
    });
  });

  it('lists with pages, deletes, and needs a credential', async () => {
    const c = await t.customer();
    for (const name of ['one', 'two', 'three'])
      expect((await create({ name, image: 'x:1' }, c.pat)).status).toBe(201);
    const page = await t.request('GET', '/v1/apps?per_page=2&page=2', { key: c.pat });
    expect(page.body).toMatchObject({ total: 3, page: 2, per_page: 2 });
    expect(page.body.apps.map((x: { name: string }) => x.name)).toEqual(['three']);
    const del = await t.request('DELETE', '/v1/apps/two', { key: c.pat });
    expect(del.body).toEqual({ deleted: true, id: expect.any(String) });
    expect((await get(del.body.id, c.pat)).status).toBe(404);
    expect((await t.request('DELETE', '/v1/apps/two', { key: c.pat })).status).toBe(404);
    expect((await t.request('GET', '/v1/apps/one/revisions', { key: c.pat })).body.total).toBe(1);
    expect((await t.request('GET', '/v1/apps')).status).toBe(401);
  });

  it('lists apps in the account’s services and reports its back end as simulated', async () => {
    const c = await t.customer();
    const id = (await create({ name: 'svc', image: 'x:1' }, c.pat)).body.id;
    const r = await t.request('GET', '/v1/account/services', { key: c.pat });
    expect(r.body).toContainEqual(
      expect.objectContaining({
        id,
        service_type: 'container-apps',
        status: 'deploying',
        metadata: expect.objectContaining({ driver: 'simulated', simulated: true }),
      }),
    );
    expect(t.kernel.registry.backends).toContainEqual(
      expect.objectContaining({ area: 'apps', simulated: true }),
    );
  });

  it('never shows or touches another customer’s app', async () => {
    const mine = await create({ name: 'private', image: 'x:1' }, b.pat);
    const id = mine.body.id as string;
    for (const ref of [id, 'private']) {
      expect((await get(ref, a.pat)).status).toBe(404);
      expect((await deploy(ref, { image: 'x:2' }, a.pat)).status).toBe(404);
      expect((await post(ref, 'suspend', a.pat)).status).toBe(404);
      expect((await post(ref, 'wake', a.pat)).status).toBe(404);
      expect((await post(ref, 'rollback', a.pat, { revision_id: '1' })).status).toBe(404);
      expect((await t.request('GET', `/v1/apps/${ref}/revisions`, { key: a.pat })).status).toBe(404);
      expect((await t.request('GET', `/v1/apps/${ref}/instances`, { key: a.pat })).status).toBe(404);
      expect((await t.request('GET', `/v1/apps/${ref}/logs`, { key: a.pat })).status).toBe(404);
      expect((await t.request('DELETE', `/v1/apps/${ref}`, { key: a.pat })).status).toBe(404);
    }
    const names = (await t.request('GET', '/v1/apps', { key: a.pat })).body.apps.map(
      (x: { name: string }) => x.name,
    );
    expect(names).not.toContain('private');
    // Both customers may use the same name: their hosts differ.
    const same = await create({ name: 'private', image: 'x:1' }, a.pat);
    expect(same.status).toBe(201);
    expect(same.body.url).not.toBe(mine.body.url);
    expect((await get(id, b.pat)).status).toBe(200);
  });

  it('holds the app quota under concurrent creates', async () => {
    const c = await t.customer();
    // The free plan allows 3 apps.
    await expectLimitHolds({
      room: 3,
      attempts: 20,
      send: (i) => create({ name: `race-${i}`, image: 'x:1' }, c.pat),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
  });
});
