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
export const PublicIp = Type.Object({
  id: Type.String(),
  address: Type.String(),
  family: Type.String(),
  kind: Type.String({ description: '`gateway` (included in the cluster fee) or `floating`' }),
  included: Type.Boolean(),
  ptr_record: Nullable(Type.String()),
  allocated_at: Nullable(Type.String()),
  daily_price: Type.Union([Money, Type.Null()], {
    description: 'What a day of the address costs, per currency (null: included)',
  }),
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
export const TimelineView = Type.Object({
  status: Type.String({ description: "The cluster's status now" }),
  operation: Type.Union([Type.Literal('provision'), Type.Literal('upgrade'), Type.Literal('delete')], {
    description: 'The current or last long operation: its steps follow',
  }),
  steps: Type.Array(
    Type.Object({
      name: Type.String({
        description: 'validate, network, gateway … for provisioning; backup, upgrade; teardown',
      }),
      state: Type.Union([
        Type.Literal('done'),
        Type.Literal('current'),
        Type.Literal('pending'),
        Type.Literal('failed'),
      ]),
      starts_at: Type.String({ format: 'date-time' }),
      ends_at: Type.String({ format: 'date-time', description: 'When the step is planned to end' }),
    }),
  ),
  next_change_in_seconds: Type.Union([
    Type.Integer({ description: 'When the next step starts or ends (look again then)' }),
    Type.Null({ description: 'Nothing is moving' }),
  ]),
});
export const UpgradeBody = Type.Object({ version: Type.String() });
export const ApiAccessBody = Type.Object({ cidrs: Type.Array(Type.String(), { maxItems: 100 }) });
export const PoolParams = Type.Object({ id: Type.String(), pool: Type.String() });
export const ScaleBody = Type.Object({ count: Type.Integer() });

export const KubeconfigQuery = Type.Object({
  expiry_seconds: Type.Optional(
    Type.Integer({
      description: 'Life of the client certificate: 600-2592000 seconds (default 604800, a week)',
    }),
  ),
});
export const KubeconfigYaml = Type.String({ description: 'A kubeconfig (YAML)' });
export const IpParams = Type.Object({ id: Type.String(), ip: Type.String() });
export const AllocateIpBody = Type.Object(
  { family: Type.Optional(Type.Literal('IPv4', { description: 'Only IPv4 is offered (the default)' })) },
  { additionalProperties: false },
);
export const PtrBody = Type.Object({
  ptr_record: Type.Union([Type.String({ maxLength: 254 }), Type.Null()], {
    description: 'A host name that already resolves to the address; null removes the PTR record',
  }),
});
const Namespaces = Type.Array(Type.String({ maxLength: 63 }), { maxItems: 50 });
export const BackupPolicyView = Type.Object({
  enabled: Type.Boolean(),
  schedule_cron: Type.String(),
  retention_days: Type.Integer(),
  include_volumes: Type.Boolean(),
  namespaces: Type.Union([Namespaces, Type.Null()]),
  active: Type.Boolean(),
  time_zone: Type.String({ description: 'The cluster’s local time, in which `schedule_cron` runs' }),
  next_run_at: Nullable(Type.String()),
  updated_at: Type.String(),
});
export const BackupPolicyBody = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  schedule_cron: Type.Optional(Type.String({ maxLength: 200 })),
  retention_days: Type.Optional(Type.Integer()),
  include_volumes: Type.Optional(Type.Boolean()),
  namespaces: Type.Optional(Type.Union([Namespaces, Type.Null()])),
});
export const RestoreView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  backup_id: Type.String(),
  status: Type.String({ description: '`InProgress` or `Completed`' }),
  namespaces: Type.Union([Type.Array(Type.String()), Type.Null()], {
    description: 'The namespaces restored; null for all the backup holds',
  }),
  started_at: Type.String(),
  completes_at: Type.String({ description: 'When the restore completes (or completed)' }),
  progress_percent: Type.Integer({ minimum: 0, maximum: 100 }),
  next_change_in_seconds: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Seconds until the restore completes; null once it has',
  }),
});
export const BackupView = Type.Object({
  id: Type.String(),
  kind: Type.String({ description: '`scheduled`, `manual` or `pre-upgrade`' }),
  name: Type.String(),
  status: Type.String({ description: '`InProgress`, then `Completed`' }),
  started_at: Type.String(),
  completed_at: Nullable(Type.String()),
  expires_at: Type.String(),
  items_count: Type.Integer(),
  error: Nullable(Type.String()),
  namespaces: Type.Union([Namespaces, Type.Null()]),
  include_volumes: Type.Boolean(),
});
export const NamespacesBody = Type.Object({ namespaces: Type.Optional(Namespaces) });
export const BackupParams = Type.Object({ id: Type.String(), backup: Type.String() });
