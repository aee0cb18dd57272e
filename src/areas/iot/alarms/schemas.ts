import { type TSchema, Type } from '@sinclair/typebox';
import { Nullable, NullableTimestamp, Timestamp } from '../../../kernel/http/common-schemas.js';
import { pageQuery } from '../../../kernel/http/pagination.js';
import { CHANNEL_TYPES, POLICY_EVENTS } from './channels.js';
import { OPERATORS, SEVERITIES } from './conditions.js';

const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });
const Id = Type.String({ minLength: 1, maxLength: 64 });
/** A union of string literals that keeps its static type (`Type.Union` over a mapped array loses it). */
const literals = <T extends readonly string[]>(xs: T, description?: string) =>
  Type.Unsafe<T[number]>(
    Type.Union(
      xs.map((x) => Type.Literal(x)),
      { description },
    ),
  );
const HHMM = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, local time' });
const Scalar = Type.Union([Type.Number(), Type.Boolean(), Type.String({ maxLength: 1024 })]);

export const Filter = Type.Object(
  {
    key: Text(64),
    source: Type.Optional(
      literals(['telemetry', 'attribute'] as const, 'telemetry (default) or device metadata'),
    ),
    operator: literals(OPERATORS),
    value: Type.Optional(Scalar),
    min: Type.Optional(Type.Number()),
    max: Type.Optional(Type.Number()),
  },
  { additionalProperties: false },
);

export const Condition = Type.Object(
  {
    type: literals(['simple', 'repeating', 'duration', 'inactivity'] as const),
    filters: Type.Optional(Type.Array(Filter, { maxItems: 20, description: 'All must hold (AND)' })),
    count: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10_000, description: 'repeating: messages in a row' }),
    ),
    duration_seconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 7 * 86_400,
        description: 'duration: seconds the filters must hold',
      }),
    ),
    inactivity_seconds: Type.Optional(
      Type.Integer({
        minimum: 60,
        maximum: 30 * 86_400,
        description: 'inactivity: seconds without activity',
      }),
    ),
    inactivity_basis: Type.Optional(literals(['telemetry', 'connection'] as const)),
  },
  { additionalProperties: false },
);

const Severities = Type.Object(
  Object.fromEntries(SEVERITIES.map((s) => [s, Type.Optional(Condition)])) as Record<string, TSchema>,
  { additionalProperties: false, description: 'A condition per severity; at least one' },
);
const Schedule = Type.Object(
  {
    timezone: Text(64),
    days: Type.Array(Type.Integer({ minimum: 1, maximum: 7 }), {
      maxItems: 7,
      description: '1 = Monday … 7 = Sunday',
    }),
    start: HHMM,
    end: HHMM,
  },
  { additionalProperties: false },
);
const Target = Type.Object(
  {
    type: literals(['all', 'device', 'group', 'profile', 'device_type'] as const),
    value: Type.Optional(Nullable(Text(100))),
  },
  { additionalProperties: false },
);

const ruleFields = {
  name: Text(200),
  description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  enabled: Type.Optional(Type.Boolean()),
  target: Type.Optional(Target),
  severities: Severities,
  clear_condition: Type.Optional(Nullable(Condition)),
  schedule: Type.Optional(Nullable(Schedule)),
};
export const CreateRuleBody = Type.Object(ruleFields, { additionalProperties: false });
export const PatchRuleBody = Type.Partial(Type.Object(ruleFields), { additionalProperties: false });
export const Rule = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  enabled: Type.Boolean(),
  target: Type.Object({ type: Type.String(), value: Nullable(Type.String()) }),
  severities: Severities,
  clear_condition: Nullable(Condition),
  schedule: Nullable(Schedule),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});
export const RuleParams = Type.Object({ rule_id: Id });

const AlarmStatus = literals(['active', 'acknowledged', 'resolved'] as const);
export const Alarm = Type.Object({
  id: Type.String(),
  rule_id: Type.String(),
  rule_name: Type.String(),
  device_id: Type.String(),
  severity: literals(SEVERITIES),
  status: AlarmStatus,
  acknowledged: Type.Boolean(),
  cleared_by: Nullable(literals(['rule', 'user'] as const)),
  details: Type.Record(Type.String(), Type.Unknown()),
  created_at: Timestamp(),
  updated_at: Timestamp(),
  acknowledged_at: NullableTimestamp(),
  acknowledged_by: Nullable(Type.String()),
  resolved_at: NullableTimestamp(),
  resolved_by: Nullable(Type.String()),
  last_notified_at: NullableTimestamp(),
});
export const AlarmParams = Type.Object({ alarm_id: Id });
export const ListAlarmsQuery = Type.Intersect([
  pageQuery('page_size', 50, 200),
  Type.Object({
    status: Type.Optional(
      literals(['active', 'acknowledged', 'resolved', 'open'] as const, 'open = active or acknowledged'),
    ),
    severity: Type.Optional(literals(SEVERITIES)),
    device_id: Type.Optional(Id),
    rule_id: Type.Optional(Id),
    from: Type.Optional(Type.String({ format: 'date-time' })),
    to: Type.Optional(Type.String({ format: 'date-time' })),
  }),
]);
export const AlarmList = Type.Object({
  alarms: Type.Array(Alarm),
  total: Type.Integer(),
  page: Type.Integer(),
  page_size: Type.Integer(),
  has_more: Type.Boolean(),
});
const count = Type.Integer();
export const AlarmSummary = Type.Object({
  open: count,
  by_status: Type.Object({ active: count, acknowledged: count, resolved: count }),
  open_by_severity: Type.Object({ critical: count, major: count, minor: count, warning: count }),
  checked_at: Timestamp(),
});
export const Timeline = Type.Object({
  alarm_id: Type.String(),
  events: Type.Array(
    Type.Object({
      at: Timestamp(),
      event: Type.String({
        description: 'created, severity_changed, acknowledged, resolved, reopened or notified',
      }),
      actor: Type.String({ description: 'rule:<id>, notifier, or the credential that asked (pat:<id>, …)' }),
      details: Type.Record(Type.String(), Type.Unknown()),
    }),
  ),
});

const channelFields = {
  name: Text(200),
  channel_type: literals(CHANNEL_TYPES),
  config: Type.Record(Type.String(), Type.Unknown(), { description: 'webhook: {"url": "https://…"}' }),
  enabled: Type.Optional(Type.Boolean()),
};
export const CreateChannelBody = Type.Object(channelFields, { additionalProperties: false });
export const PatchChannelBody = Type.Partial(Type.Object(channelFields), { additionalProperties: false });
export const Channel = Type.Object({
  id: Type.String(),
  name: Type.String(),
  channel_type: Type.String(),
  config: Type.Record(Type.String(), Type.Unknown()),
  enabled: Type.Boolean(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});
export const ChannelParams = Type.Object({ channel_id: Id });

const Ids = (description: string) => Type.Optional(Nullable(Type.Array(Id, { maxItems: 200, description })));
const policyFields = {
  name: Text(200),
  enabled: Type.Optional(Type.Boolean()),
  channel_ids: Type.Array(Id, { minItems: 1, maxItems: 20 }),
  severities: Type.Optional(
    Nullable(Type.Array(literals(SEVERITIES), { description: 'null: every severity' })),
  ),
  rule_ids: Ids('null: every rule'),
  group_ids: Ids('null: every group'),
  device_ids: Ids('null: every device'),
  events: Type.Optional(
    Type.Array(literals(POLICY_EVENTS), { minItems: 1, description: 'Default: created and escalated' }),
  ),
  renotify_minutes: Type.Optional(
    Nullable(
      Type.Integer({
        minimum: 5,
        maximum: 10_080,
        description: 'Repeat while the alarm stays active and unacknowledged',
      }),
    ),
  ),
  quiet_hours: Type.Optional(
    Nullable(
      Type.Object(
        { timezone: Text(64), start: HHMM, end: HHMM },
        { additionalProperties: false, description: 'Notifications in this window are suppressed' },
      ),
    ),
  ),
};
export const CreatePolicyBody = Type.Object(policyFields, { additionalProperties: false });
export const PatchPolicyBody = Type.Partial(Type.Object(policyFields), { additionalProperties: false });
export const Policy = Type.Object({
  id: Type.String(),
  name: Type.String(),
  enabled: Type.Boolean(),
  channel_ids: Type.Array(Type.String()),
  severities: Nullable(Type.Array(Type.String())),
  rule_ids: Nullable(Type.Array(Type.String())),
  group_ids: Nullable(Type.Array(Type.String())),
  device_ids: Nullable(Type.Array(Type.String())),
  events: Type.Array(Type.String()),
  renotify_minutes: Nullable(Type.Integer()),
  quiet_hours: Nullable(Type.Object({ timezone: Type.String(), start: Type.String(), end: Type.String() })),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});
export const PolicyParams = Type.Object({ policy_id: Id });

export const Delivery = Type.Object({
  id: Type.String(),
  channel_id: Type.String(),
  policy_id: Nullable(Type.String()),
  alarm_id: Nullable(Type.String()),
  event: Type.String(),
  test: Type.Boolean(),
  status: literals(['pending', 'delivered', 'failed', 'suppressed'] as const),
  attempts: Type.Integer(),
  response_code: Nullable(Type.Integer()),
  error: Nullable(
    Type.String({ description: 'Why it failed, or why it was suppressed (throttled, quiet_hours)' }),
  ),
  created_at: Timestamp(),
  completed_at: NullableTimestamp(),
});
export const ListDeliveriesQuery = Type.Intersect([
  pageQuery('page_size', 50, 200),
  Type.Object({
    channel_id: Type.Optional(Id),
    alarm_id: Type.Optional(Id),
    status: Type.Optional(literals(['pending', 'delivered', 'failed', 'suppressed'] as const)),
  }),
]);
export const DeliveryList = Type.Object({
  deliveries: Type.Array(Delivery),
  total: Type.Integer(),
  page: Type.Integer(),
  page_size: Type.Integer(),
  has_more: Type.Boolean(),
});
