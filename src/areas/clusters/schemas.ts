import { type Static, Type } from '@sinclair/typebox';
import { CURRENCIES } from './catalogue.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const Money = Type.Record(Type.String(), Type.Number());

export const PlanView = Type.Object({
  plan_code: Type.String(),
  kind: Type.String(),
  name: Type.String(),
  cpu_cores: Type.Integer(),
  ram_mb: Type.Integer(),
  disk_gb: Type.Integer(),
  prices: Money,
  hourly: Money,
});
export const PlansQuery = Type.Object({
  region: Type.Optional(Type.String()),
  kind: Type.Optional(
    Type.Union(['controlplane', 'node', 'ip', 'lb', 'storage', 'backup'].map((k) => Type.Literal(k))),
  ),
});
export const RegionView = Type.Object({
  code: Type.String(),
  name: Type.String(),
  city: Type.String(),
  country_code: Type.String(),
  kubernetes_available: Type.Boolean(),
  price_multiplier: Type.Number(),
});
export const VersionView = Type.Object({
  version: Type.String(),
  default: Type.Boolean(),
  end_of_support: Type.String({ format: 'date' }),
});

const Taint = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 317 }),
  value: Type.Optional(Type.String({ maxLength: 63 })),
  effect: Type.String(),
});
export const PoolBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 40 }),
  plan_code: Type.String(),
  count: Type.Integer(),
  labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  taints: Type.Optional(Type.Array(Taint, { maxItems: 50 })),
});
export const EstimateBody = Type.Object({
  plan_code: Type.Optional(Type.String()),
  region: Type.Optional(Type.String()),
  node_pools: Type.Array(
    Type.Object({
      name: Type.String(),
      plan_code: Type.String(),
      count: Type.Integer({ minimum: 0, maximum: 16 }),
    }),
    { maxItems: 8 },
  ),
  currency: Type.Optional(Type.Union(CURRENCIES.map((c) => Type.Literal(c)))),
});
export const EstimateView = Type.Object({
  currency: Type.String(),
  region_multiplier: Type.Number(),
  lines: Type.Array(Type.Object({ item: Type.String(), quantity: Type.Integer(), monthly: Type.Number() })),
  monthly_total: Type.Number(),
});
export const ClusterBody = Type.Object({
  name: Type.String({ maxLength: 63 }),
  region: Type.Optional(Type.String()),
  plan_code: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
  node_pools: Type.Array(PoolBody, { maxItems: 8 }),
  api_ip_filter: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })),
  ssh_key_ids: Type.Optional(Type.Array(Type.String(), { maxItems: 20 })),
});
export type ClusterBody = Static<typeof ClusterBody>;

export const PoolView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  plan_code: Type.String(),
  count: Type.Integer(),
  status: Type.String({
    description: '`pending` until the cluster runs, then `ready`; `draining` or `scaling` while a scale runs',
  }),
  cpu_cores: Type.Integer(),
  ram_mb: Type.Integer(),
  disk_gb: Type.Integer(),
  nodes_seen: Type.Integer(),
  labels: Type.Record(Type.String(), Type.String()),
  taints: Type.Array(Taint),
});
const PublicIp = Type.Object({
  id: Type.String(),
  address: Type.String(),
  family: Type.String(),
  kind: Type.String(),
  included: Type.Boolean(),
  ptr_record: Nullable(Type.String()),
});
export const ClusterView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  technical_name: Type.String(),
  region: Type.String(),
  region_name: Type.String(),
  region_city: Type.String(),
  plan_code: Type.String(),
  version: Type.String(),
  status: Type.String(),
  status_message: Type.String(),
  provisioning_step: Nullable(Type.String()),
  api_endpoint: Nullable(Type.String()),
  api_ip_filter: Type.Array(Type.String()),
  oidc_enabled: Type.Boolean(),
  network_cidr: Type.String(),
  node_pools: Type.Array(PoolView),
  public_ips: Type.Array(PublicIp),
  ssh_key_ids: Type.Array(Type.String()),
  created_at: Type.String(),
  running_since: Nullable(Type.String()),
  trial_ends_at: Nullable(Type.String()),
  delete_requested_at: Nullable(Type.String()),
});
export const ClusterParams = Type.Object({ id: Type.String() });
export const DeleteBody = Type.Object({ confirm_name: Type.String() });
export const HistoryView = Type.Object({
  history: Type.Array(
    Type.Object({
      id: Type.String(),
      action: Type.String(),
      actor: Type.String(),
      at: Type.String(),
      details: Type.Record(Type.String(), Type.Unknown()),
    }),
  ),
});
export const UpgradeBody = Type.Object({ version: Type.String() });
export const ApiAccessBody = Type.Object({ cidrs: Type.Array(Type.String(), { maxItems: 100 }) });
export const PoolParams = Type.Object({ id: Type.String(), pool: Type.String() });
export const ScaleBody = Type.Object({ count: Type.Integer() });
