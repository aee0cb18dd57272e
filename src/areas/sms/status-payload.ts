import { isoOf } from '../../kernel/clock.js';
import type { MessageStatus, MessagesTable } from './migrations.js';

/**
 * The status callback, shaped like Twilio's (MessageSid, MessageStatus, To, From, ErrorMessage …)
 * in this API's snake_case JSON: docs/sms.md lists every field.
 */
export function statusPayload(m: MessagesTable, previous: MessageStatus | null) {
  return {
    event: m.direction === 'INBOUND' ? 'sms.inbound' : 'sms.status',
    sms_message_id: m.id,
    message_status: m.status,
    previous_status: previous,
    direction: m.direction,
    message_type: m.message_type,
    from_number: m.from_number,
    to_number: m.to_number,
    units_count: m.units_count,
    customer_ref: m.customer_ref,
    related_message_id: m.related_message_id,
    error_message: m.error_message,
    body: m.direction === 'INBOUND' ? m.body : undefined,
    timestamp: isoOf(m.updated_at),
    sent_at: isoOf(m.sent_at),
    delivered_at: isoOf(m.delivered_at),
  };
}
