import { newId } from '../../kernel/ids.js';
import { DEFAULT_CONTROL_PLANE, planOf } from './catalogue.js';
import type { StoredPool } from './cluster-view.js';
import { clusterErrors } from './errors.js';
import type { PoolInput } from './service.js';

/** Validation Kubernetes itself applies to names, labels, taints and CIDRs, so a cluster never refuses what Fjord took. */
export const CLUSTER_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const POOL_NAME = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;
const NAME_PART = /^[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

export function checkClusterName(name: string) {
  if (name.length < 2 || name.length > 63 || !CLUSTER_NAME.test(name))
    throw clusterErrors.invalid(
      'name: 2-63 lowercase letters, digits and hyphens, starting and ending alphanumeric',
      '/body/name',
    );
}

export function checkPoolName(name: string, path: string) {
  if (!POOL_NAME.test(name))
    throw clusterErrors.invalid('pool name: 1-40 lowercase letters, digits and hyphens', path);
}

/** A qualified name: optional `prefix/` (DNS subdomain ≤ 253) and a name part ≤ 63. */
function checkQualifiedKey(key: string, path: string) {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : null;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== null && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)))
    throw clusterErrors.invalid(`key ${key}: the prefix must be a DNS subdomain`, path);
  if (!NAME_PART.test(name))
    throw clusterErrors.invalid(`key ${key}: name part must be 1-63 alphanumerics, -, _ or .`, path);
}

export function checkLabels(labels: Record<string, string> | undefined, path: string) {
  for (const [k, v] of Object.entries(labels ?? {})) {
    checkQualifiedKey(k, `${path}/${k}`);
    if (!LABEL_VALUE.test(v))
      throw clusterErrors.invalid(`label ${k}: value must be 0-63 alphanumerics, -, _ or .`, `${path}/${k}`);
  }
}

export function checkTaints(
  taints: { key: string; value?: string; effect: string }[] | undefined,
  path: string,
) {
  (taints ?? []).forEach((t, i) => {
    checkQualifiedKey(t.key, `${path}/${i}/key`);
    if (t.value !== undefined && !LABEL_VALUE.test(t.value))
      throw clusterErrors.invalid('taint value must be 0-63 alphanumerics, -, _ or .', `${path}/${i}/value`);
    if (!EFFECTS.includes(t.effect))
      throw clusterErrors.invalid(`effect must be one of ${EFFECTS.join(', ')}`, `${path}/${i}/effect`);
  });
}

/** IPv4 or IPv6 CIDRs with the host bits clear, written the way the API server's filter reads them. */
export function checkCidrs(cidrs: string[], path: string): string[] {
  return cidrs.map((c, i) => {
    const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(c);
    if (!m || m.slice(1, 5).some((o) => Number(o) > 255) || Number(m[5]) > 32)
      throw clusterErrors.invalid(`${c} is not an IPv4 CIDR such as 198.51.100.0/24`, `${path}/${i}`);
    const bits = Number(m[5]);
    const addr = m.slice(1, 5).reduce((a, o) => a * 256 + Number(o), 0);
    const host = bits === 32 ? 0 : addr % 2 ** (32 - bits);
    if (host !== 0) throw clusterErrors.invalid(`${c} has host bits set`, `${path}/${i}`);
    return c;
  });
}

/** The control-plane plan a cluster asks for (the default when none); 422 for another kind. */
export function controlPlaneOf(code: string | undefined) {
  const p = planOf(code ?? DEFAULT_CONTROL_PLANE);
  if (!p || p.kind !== 'controlplane') throw clusterErrors.invalidPlan(code!, 'controlplane');
  return p.plan_code;
}

/** A node plan by code; 422 when it is unknown or not a node plan. */
export function nodePlanOf(code: string) {
  const p = planOf(code);
  if (!p || p.kind !== 'node') throw clusterErrors.invalidPlan(code, 'node');
  return p;
}

/** Checks a cluster's node pools as Kubernetes and the plans would, and gives each its id. */
export function checkPools(pools: PoolInput[]): StoredPool[] {
  if (pools.length < 1 || pools.length > 8)
    throw clusterErrors.invalid('A cluster has 1-8 node pools.', '/body/node_pools');
  const names = new Set<string>();
  return pools.map((p, i) => {
    const path = `/body/node_pools/${i}`;
    checkPoolName(p.name, `${path}/name`);
    if (names.has(p.name)) throw clusterErrors.invalid(`Pool name ${p.name} is used twice.`, `${path}/name`);
    names.add(p.name);
    nodePlanOf(p.plan_code);
    if (!Number.isInteger(p.count) || p.count < 1 || p.count > 16)
      throw clusterErrors.invalid('count is 1-16 at creation.', `${path}/count`);
    checkLabels(p.labels, `${path}/labels`);
    checkTaints(p.taints, `${path}/taints`);
    return {
      id: newId(),
      name: p.name,
      plan_code: p.plan_code,
      count: p.count,
      labels: p.labels ?? {},
      taints: p.taints ?? [],
    };
  });
}
