import { Type } from '@sinclair/typebox';
import { Nullable, NullableTimestamp, Timestamp } from '../../kernel/http/common-schemas.js';

const lit = (...values: string[]) => Type.Union(values.map((v) => Type.Literal(v)));

export const MESSAGE_STATUSES = [
  'QUEUED',
  'SCHEDULED',
  'SENDING',
  'SENT',
  'DELIVERED',
  'FAILED',
  'CANCELLED',
  'RECEIVED',
] as const;
export const MessageStatusSchema = lit(...MESSAGE_STATUSES);

const Id = Type.String({ minLength: 1, maxLength: 64 });

export const SendBody = Type.Object(
  {
    to: Type.Optional(
      Type.Array(Type.String({ maxLength: 32 }), { maxItems: 1000, description: 'E.164 numbers' }),
    ),
    to_contacts: Type.Optional(Type.Array(Id, { maxItems: 1000, description: 'Contact ids' })),
    to_groups: Type.Optional(Type.Array(Id, { maxItems: 100, description: 'Contact group ids' })),
    message: Type.String({
      minLength: 1,
      maxLength: 1600,
      description: 'At most 1600 characters and 10 parts',
    }),
    sender_profile_id: Type.Optional(Nullable(Id)),
    allow_reply: Type.Optional(Type.Boolean()),
    customer_ref: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    callback_url: Type.Optional(Nullable(Type.String({ maxLength: 2048, description: 'https:// only' }))),
    scheduled_at: Type.Optional(
      Nullable(Type.String({ maxLength: 64, description: 'ISO 8601, at most 30 days ahead' })),
    ),
    timezone: Type.Optional(
      Nullable(Type.String({ maxLength: 64, description: 'IANA zone for a scheduled_at without offset' })),
    ),
  },
  { additionalProperties: false },
);

export const SendResult = Type.Object(
  {
    sms_message_id: Type.String({ description: 'Id of the message to the first recipient' }),
    to: Type.Array(Type.String(), { description: 'Every recipient, resolved and de-duplicated' }),
    status: lit('QUEUED', 'SCHEDULED'),
    scheduled_at: NullableTimestamp(),
    units_estimate: Type.Integer({ description: 'Parts × recipients' }),
    customer_ref: Nullable(Type.String()),
    messages: Type.Array(Type.Object({ sms_message_id: Type.String(), to: Type.String() }), {
      description: 'One message per recipient (ours)',
    }),
  },
  { title: 'SmsSendResult' },
);

export const SmsMessage = Type.Object(
  {
    id: Type.String(),
    direction: lit('OUTBOUND', 'INBOUND'),
    message_type: lit('PLAIN', 'REPLY', 'VERIFY', 'ALERT'),
    from_number: Type.String(),
    to_number: Type.String(),
    body: Type.String(),
    status: MessageStatusSchema,
    units_count: Type.Integer(),
    customer_ref: Nullable(Type.String()),
    created_at: Timestamp(),
    scheduled_at: NullableTimestamp(),
    sent_at: NullableTimestamp(),
    delivered_at: NullableTimestamp(),
    related_message_id: Nullable(Type.String()),
    error_message: Nullable(Type.String()),
    encoding: lit('GSM-7', 'UCS-2'),
    sender_profile_id: Nullable(Type.String()),
    contact_id: Nullable(Type.String()),
    callback_url: Nullable(Type.String()),
    allow_reply: Type.Boolean(),
  },
  { title: 'SmsMessage' },
);

export const MessageListQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    status: Type.Optional(MessageStatusSchema),
    direction: Type.Optional(lit('OUTBOUND', 'INBOUND')),
    message_type: Type.Optional(lit('PLAIN', 'REPLY', 'VERIFY', 'ALERT')),
    date_from: Type.Optional(Type.String({ format: 'date-time', description: 'created_at ≥ this' })),
    date_to: Type.Optional(Type.String({ format: 'date-time', description: 'created_at < this' })),
    recipient: Type.Optional(Type.String({ maxLength: 32, description: 'to_number, E.164' })),
    customer_ref: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false },
);

export const MessageList = Type.Object(
  {
    messages: Type.Array(SmsMessage),
    total: Type.Integer(),
    page: Type.Integer(),
    page_size: Type.Integer(),
    has_more: Type.Boolean(),
  },
  { title: 'SmsMessageList' },
);

export const MessageIdParams = Type.Object({ message_id: Id });
export const CancelResult = Type.Object({ message: Type.String(), message_id: Type.String() });

export const SenderProfile = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    sender_id: Type.String(),
    is_default: Type.Boolean(),
    allow_reply: Type.Boolean(),
    is_custom_sender: Type.Boolean(),
    approval_status: lit('pending', 'approved', 'rejected'),
    monthly_price: Type.Number(),
    created_at: Timestamp(),
  },
  { title: 'SmsSenderProfile' },
);

export const NewSenderProfileBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    sender_id: Type.String({ minLength: 1, maxLength: 32 }),
    allow_reply: Type.Optional(Type.Boolean()),
    is_default: Type.Optional(Type.Boolean()),
    brand_confirmation: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const ProfileIdParams = Type.Object({ profile_id: Id });
export const ProfileDeleted = Type.Object({ message: Type.String(), profile_id: Type.String() });

export const ReviewedProfile = Type.Object(
  {
    ...SenderProfile.properties,
    customer_id: Type.String(),
    brand_confirmation: Type.Boolean(),
    review_note: Nullable(Type.String()),
    reviewed_at: NullableTimestamp(),
  },
  { title: 'SmsSenderProfileReview' },
);

export const SmsStatus = Type.Object(
  {
    active: Type.Boolean(),
    has_sender_profiles: Type.Boolean(),
    has_api_key: Type.Boolean(),
    default_sender: Nullable(Type.String()),
    messages_today: Type.Integer(),
    messages_this_month: Type.Integer(),
    messages_sent_30d: Type.Integer(),
    messages_received_30d: Type.Integer(),
  },
  { title: 'SmsStatus' },
);

export const UsageQuery = Type.Object(
  { period: Type.Optional(Type.String({ description: 'Month as YYYY-MM (default: this month, UTC)' })) },
  { additionalProperties: false },
);

export const SmsUsage = Type.Object(
  {
    period: Type.String(),
    period_start: Timestamp(),
    period_end: Timestamp(),
    messages_sent: Type.Integer(),
    messages_received: Type.Integer(),
    messages_failed: Type.Integer(),
    units_used: Type.Integer(),
    cost: Type.Number(),
    currency: Type.String(),
    price_per_unit: Type.Number(),
    outbound_cost: Type.Number(),
    inbound_cost: Type.Number(),
  },
  { title: 'SmsUsage' },
);

const Window = Type.Object({
  messages_sent: Type.Integer(),
  messages_received: Type.Integer(),
  units_used: Type.Integer(),
  delivery_rate: Type.Number({ description: 'Percent of settled outbound messages that were delivered' }),
});

export const SmsStats = Type.Object(
  {
    today: Window,
    this_week: Window,
    this_month: Window,
    last_30_days: Window,
    status_breakdown: Type.Record(Type.String(), Type.Integer()),
  },
  { title: 'SmsStats' },
);

export const InjectInboundBody = Type.Object(
  {
    from: Type.String({ minLength: 2, maxLength: 32, description: 'E.164 number of the phone' }),
    to: Type.Optional(
      Type.String({ maxLength: 32, description: 'Number it was sent to (default: the shared number)' }),
    ),
    message: Type.String({ minLength: 1, maxLength: 1600 }),
  },
  { additionalProperties: false },
);

export const InboundRouted = Type.Object(
  {
    routed: lit('keyword', 'reply', 'number', 'none'),
    message_id: Nullable(Type.String()),
    customer_id: Nullable(Type.String()),
    keyword_id: Type.Optional(Type.String()),
    related_message_id: Type.Optional(Type.String()),
  },
  { title: 'SmsInboundRouted' },
);

// ---- keywords

export const Keyword = Type.Object(
  {
    id: Type.String(),
    keyword: Type.String(),
    description: Nullable(Type.String()),
    is_active: Type.Boolean(),
    webhook_url: Nullable(Type.String()),
    auto_reply_enabled: Type.Boolean(),
    auto_reply_message: Nullable(Type.String()),
    messages_received: Type.Integer(),
    last_message_at: NullableTimestamp(),
    created_at: Timestamp(),
  },
  { title: 'SmsKeyword' },
);

const KeywordWord = Type.String({ minLength: 1, maxLength: 64, description: '2-20 letters and digits' });

export const NewKeywordBody = Type.Object(
  {
    keyword: KeywordWord,
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    webhook_url: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
    auto_reply_message: Type.Optional(Nullable(Type.String({ maxLength: 1600 }))),
    auto_reply_enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const UpdateKeywordBody = Type.Object(
  {
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    webhook_url: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
    auto_reply_enabled: Type.Optional(Type.Boolean()),
    auto_reply_message: Type.Optional(Nullable(Type.String({ maxLength: 1600 }))),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const KeywordIdParams = Type.Object({ keyword_id: Id });
export const KeywordWordParams = Type.Object({ keyword: KeywordWord });
export const KeywordAvailability = Type.Object(
  { keyword: Type.String(), available: Type.Boolean() },
  { title: 'SmsKeywordAvailability' },
);
export const KeywordReleased = Type.Object({ message: Type.String(), keyword_id: Type.String() });
