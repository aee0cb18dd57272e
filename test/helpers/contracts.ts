import { expect } from 'vitest';
import { ALL_SCOPES, SERVICES } from '../../src/kernel/auth/catalogue.js';
import type { AnyRoute } from '../../src/kernel/http/route.js';
import type { TestFjord } from './fjord.js';

/** Path of a route with every `:param` filled by a placeholder (auth is decided before lookup). */
export const samplePath = (route: AnyRoute) => route.url.replace(/:([a-z_]+)/g, 'placeholder');

export function routesOfTag(t: TestFjord, tag: string): AnyRoute[] {
  const routes = t.fjord.routes.filter((r) => r.tag === tag);
  expect(routes.length).toBeGreaterThan(0);
  return routes;
}

/**
 * For every route of an area: no credential → 401; an expired PAT → 401; a revoked key → 401;
 * a service key for a service the route does not take → 403; a PAT without the route's scopes → 403.
 * The clock is moved two days forward to expire the PAT.
 */
export async function expectAuthMatrix(t: TestFjord, tag: string) {
  const routes = routesOfTag(t, tag);
  const c = await t.customer();
  const id = c.id;
  const { identity } = t.kernel;
  const expiring = await identity.createPat(id, [...ALL_SCOPES], 'expiring', 1);
  const revoked = await identity.createFullPat(id, 'revoked');
  await identity.revokeKey(id, revoked.view.id);
  const unrelatedPat = await identity.createPat(id, ['gpu:read'], 'unrelated');
  await t.advance(2 * 86400);

  for (const route of routes) {
    if (route.access.kind === 'public') continue;
    const path = samplePath(route);
    const label = `${route.method} ${route.url}`;
    const none = await t.request(route.method, path);
    expect(none.status, `${label} without credential`).toBe(401);
    expect(none.body.detail.code, label).toBe('unauthenticated');
    const expired = await t.request(route.method, path, { key: expiring.key });
    expect(expired.status, `${label} with expired PAT`).toBe(401);
    const gone = await t.request(route.method, path, { key: revoked.key });
    expect(gone.status, `${label} with revoked key`).toBe(401);
    if (route.access.kind !== 'customer') continue;

    const accepted = route.access.services === 'any' ? [...SERVICES] : (route.access.services ?? []);
    const wrongService = SERVICES.find((s) => !accepted.includes(s));
    if (wrongService) {
      const k = await identity.createServiceKey(id, wrongService, null);
      const r = await t.request(route.method, path, { key: k.key });
      expect(r.status, `${label} with a ${wrongService} service key`).toBe(403);
      expect(r.body.detail.code).toBe('forbidden');
    }
    const r = await t.request(route.method, path, { key: unrelatedPat.key });
    expect(r.status, `${label} with a PAT lacking its scope`).toBe(403);
  }
}

export interface IsolationProbe {
  method: string;
  url: string;
  body?: unknown;
}

/**
 * Customer B gets 404 — never 403, never the data — for each of customer A's resources, while A
 * can still reach them afterwards (so B's attempt changed nothing).
 */
export async function expectTenantIsolation(
  t: TestFjord,
  owner: { key: string },
  other: { key: string },
  probes: IsolationProbe[],
) {
  for (const p of probes) {
    const r = await t.request(p.method, p.url, { key: other.key, body: p.body });
    expect(r.status, `${p.method} ${p.url} by another customer`).toBe(404);
  }
  for (const p of probes.filter((x) => x.method === 'GET')) {
    const r = await t.request(p.method, p.url, { key: owner.key });
    expect(r.status, `${p.method} ${p.url} by its owner`).toBe(200);
  }
}
