import { Type } from '@sinclair/typebox';
import { Nullable, NullableTimestamp, Timestamp } from '../../kernel/http/common-schemas.js';
import { pageQuery } from '../../kernel/http/pagination.js';

/** A safe MQTT client id: what device_id may be, since devices may use it on the wire. */
export const DEVICE_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$';
const Metadata = Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form JSON object' });
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });

export const Device = Type.Object({
  device_id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  device_type: Nullable(Type.String()),
  is_active: Type.Boolean(),
  is_online: Type.Boolean(),
  last_seen: NullableTimestamp('Last time the broker heard from the device'),
  connection_status: Type.Union([Type.Literal('connected'), Type.Literal('disconnected')]),
  stability_score: Nullable(Type.Integer({ description: '0-100 from connects/disconnects over 24 h' })),
  firmware_version: Nullable(Type.String()),
  tags: Type.Array(Type.String()),
  metadata: Metadata,
  messages_24h: Type.Integer(),
  battery_level: Nullable(Type.Integer()),
  signal_strength: Nullable(Type.Integer()),
  created_at: Timestamp(),
});

export const MqttCredentials = Type.Object(
  {
    username: Type.String(),
    password: Type.String({ description: 'Shown only here; Fjord keeps a hash' }),
    client_id: Type.String(),
    host: Type.String(),
    port: Type.Integer(),
    topic_root: Type.String({ description: 'The device publishes and subscribes only under this' }),
  },
  { description: 'The device’s MQTT login. The password is shown once, on create and on rotation.' },
);

export const DeviceWithCredentials = Type.Intersect([
  Device,
  Type.Object({ mqtt_credentials: MqttCredentials }),
]);

export const CreateDeviceBody = Type.Object(
  {
    name: Text(200),
    device_id: Type.Optional(Type.String({ maxLength: 64, description: 'A UUID is generated when omitted' })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    device_type: Type.Optional(Text(100)),
    firmware_version: Type.Optional(Text(100)),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);

export const PatchDeviceBody = Type.Object(
  {
    name: Type.Optional(Text(200)),
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    device_type: Type.Optional(Nullable(Text(100))),
    firmware_version: Type.Optional(Nullable(Text(100))),
    metadata: Type.Optional(Metadata),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const ListDevicesQuery = Type.Intersect([
  pageQuery('page_size', 50, 200),
  Type.Object({
    device_type: Type.Optional(Text(100)),
    tag: Type.Optional(Text(64)),
    group_id: Type.Optional(Text(64)),
    is_online: Type.Optional(Type.Boolean()),
    is_active: Type.Optional(Type.Boolean()),
  }),
]);

export const DeviceList = Type.Object({
  devices: Type.Array(Device),
  total: Type.Integer(),
  page: Type.Integer(),
  page_size: Type.Integer(),
  has_more: Type.Boolean(),
});

export const DeviceParams = Type.Object({ device_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const TagParams = Type.Object({
  device_id: Type.String({ minLength: 1, maxLength: 64 }),
  tag: Type.String({ minLength: 1, maxLength: 64 }),
});
export const TagsBody = Type.Array(Type.String({ maxLength: 64 }), {
  maxItems: 100,
  description: 'A bare JSON array of tags',
});

export const TelemetryQuery = Type.Object({
  keys: Type.Optional(Type.String({ maxLength: 1000, description: 'Comma-separated keys' })),
  from: Type.Optional(Type.String({ format: 'date-time' })),
  to: Type.Optional(Type.String({ format: 'date-time' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000, default: 100 })),
  aggregation: Type.Optional(
    Type.Union(
      ['none', 'avg', 'min', 'max', 'sum', 'count'].map((a) => Type.Literal(a)),
      { description: 'none (raw points, default) or a function over each interval' },
    ),
  ),
  interval: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 31 * 86_400, description: 'Seconds per interval (default 3600)' }),
  ),
});
const Value = Type.Union([Type.Number(), Type.Boolean(), Type.String()]);
export const TelemetryView = Type.Object({
  device_id: Type.String(),
  aggregation: Type.String(),
  interval: Nullable(Type.Integer({ description: 'Seconds per interval; null for raw points' })),
  points: Type.Array(
    Type.Object({
      key: Type.String(),
      ts: Timestamp('The point’s time, or the start of its interval'),
      value: Nullable(Value),
      count: Type.Integer({ description: 'Points in the interval (1 for a raw point)' }),
    }),
  ),
});
export const LatestView = Type.Object({
  device_id: Type.String(),
  values: Type.Record(Type.String(), Type.Object({ value: Value, ts: Timestamp() })),
});

const Color = Type.String({
  pattern: '^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$',
  description: 'A hex colour: #rgb or #rrggbb',
});
export const Group = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  color: Nullable(Type.String()),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});
export const GroupBody = Type.Object(
  {
    name: Text(200),
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    color: Type.Optional(Nullable(Color)),
  },
  { additionalProperties: false },
);
export const GroupParams = Type.Object({ group_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const GroupDeviceParams = Type.Object({
  group_id: Type.String({ minLength: 1, maxLength: 64 }),
  device_id: Type.String({ minLength: 1, maxLength: 64 }),
});
export const GroupDevicesBody = Type.Object(
  { device_ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 1000 }) },
  { additionalProperties: false },
);

export const CommandBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
export const CommandView = Type.Object({
  command_id: Type.String(),
  device_id: Type.String(),
  topic: Type.String(),
  name: Type.String(),
  status: Type.Literal('sent'),
  sent_at: Timestamp(),
});
