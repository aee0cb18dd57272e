import { Type } from '@sinclair/typebox';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const Status = Type.String({ description: 'provisioning, running, stopped, starting or stopping' });

export const ServerParams = Type.Object({ vps_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const SnapshotParams = Type.Object({
  vps_id: Type.String({ minLength: 1, maxLength: 64 }),
  snapshot_name: Type.String({ minLength: 1, maxLength: 64 }),
});

export const CreateBody = Type.Object(
  {
    hostname: Type.String({ minLength: 1, maxLength: 253 }),
    plan_code: Type.String({ minLength: 1, maxLength: 64 }),
    region: Type.String({ minLength: 1, maxLength: 64 }),
    os_template: Type.String({ minLength: 1, maxLength: 64 }),
    display_name: Type.Optional(Type.String({ maxLength: 200 })),
    ssh_keys: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 16_384 }), {
        maxItems: 20,
        description: 'Public key lines, deployed with the account’s SSH keys',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CreateResult = Type.Object({
  id: Type.String(),
  hostname: Type.String(),
  status: Status,
  ipv4: Nullable(Type.String()),
  ipv6: Nullable(Type.String()),
});

export const ListEntry = Type.Object({
  id: Type.String(),
  hostname: Type.String(),
  display_name: Nullable(Type.String()),
  status: Status,
  ipv4_address: Nullable(Type.String()),
});
export const ServerList = Type.Object({ instances: Type.Array(ListEntry), total: Type.Integer() });

export const ServerDetail = Type.Object({
  id: Type.String(),
  hostname: Type.String(),
  display_name: Nullable(Type.String()),
  status: Status,
  plan_code: Type.String(),
  region: Type.String(),
  os_template: Type.String(),
  ipv4_address: Nullable(Type.String()),
  ipv6_address: Nullable(Type.String()),
  vcpus: Type.Integer(),
  memory_gb: Type.Integer(),
  disk_gb: Type.Integer(),
  created_at: Type.String(),
});

export const RuntimeStatus = Type.Object({
  status: Status,
  uptime_seconds: Type.Integer({ minimum: 0 }),
  cpu_usage_percent: Type.Number(),
  memory_usage_percent: Type.Number(),
  disk_usage_percent: Type.Number(),
  network_in_bytes: Type.Integer({ minimum: 0 }),
  network_out_bytes: Type.Integer({ minimum: 0 }),
});

export const ActionResult = Type.Object({
  success: Type.Boolean(),
  action: Type.String(),
  message: Type.String(),
});

export const PlanView = Type.Object({
  plan_code: Type.String(),
  name: Type.String(),
  vcpus: Type.Integer(),
  ram_gb: Type.Integer(),
  storage_gb: Type.Integer(),
  bandwidth_tb: Type.Number(),
  price: Type.Number({ description: 'Per month' }),
  currency: Type.String(),
});
export const PlansQuery = Type.Object(
  { currency: Type.Optional(Type.String({ minLength: 3, maxLength: 3 })) },
  { additionalProperties: false },
);

export const TemplateView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  family: Type.String(),
  version: Type.String(),
  is_windows: Type.Boolean(),
  available: Type.Boolean({ description: 'Whether this install’s driver can run it' }),
});

export const RegionView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  country: Type.String(),
  available: Type.Boolean(),
});

export const SnapshotView = Type.Object({
  name: Type.String(),
  description: Nullable(Type.String()),
  created_at: Type.String(),
  size_bytes: Type.Integer({ minimum: 0 }),
});
export const SnapshotList = Type.Object({
  snapshots: Type.Array(SnapshotView),
  total: Type.Integer(),
  max_snapshots: Type.Integer(),
});
export const SnapshotBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Sanitised to letters, digits and underscore',
    }),
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);
export const SnapshotCreated = Type.Object({ status: Type.Literal('created'), snapshot_name: Type.String() });
export const SnapshotDeleted = Type.Object({ status: Type.Literal('deleted'), snapshot_name: Type.String() });
export const RollbackResult = Type.Object({
  status: Type.Literal('rolling_back'),
  snapshot_name: Type.String(),
  message: Type.String(),
});
