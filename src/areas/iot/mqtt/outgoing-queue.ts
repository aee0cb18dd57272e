import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import { type AnyPacket, decodePacket, encodePacket, queuedCopy } from './packet-codec.js';
import type { MqttSessionTables } from './session-tables.js';

// The messages queued for sessions are a file of their own: unlike the rest of the broker's
// persistence (store-persistence.ts) they carry a limit per session, counted in memory so that
// a publish to many subscribers asks the store nothing, and the sequence that orders them.

export interface PersistenceLimits {
  /** Messages a session may have queued (null: unlimited); past it new ones are dropped. */
  queuedPerSession(clientId: string): Promise<number | null>;
  /** Told of each message dropped that way, for the log. */
  dropped?(clientId: string, topic: string): void;
}

/** The `iot_mqtt_outgoing` table, with each session's count and the last sequence number kept in memory. */
export class OutgoingQueue {
  private readonly queued = new Map<string, number>();
  private seq = 0;

  constructor(
    private readonly db: Kysely<MqttSessionTables>,
    private readonly limits: PersistenceLimits | null,
  ) {}

  /** The counts and the sequence as the table holds them (at setup). */
  async load(): Promise<void> {
    const queues = await this.db
      .selectFrom('iot_mqtt_outgoing')
      .select((eb) => ['client_id', eb.fn.countAll<number>().as('n'), eb.fn.max('seq').as('top')])
      .groupBy('client_id')
      .execute();
    for (const q of queues) {
      this.queued.set(q.client_id, Number(q.n));
      this.seq = Math.max(this.seq, Number(q.top));
    }
  }

  /** Drops the counts kept in memory (after an emulator reset emptied the table). */
  forget(): void {
    this.queued.clear();
  }

  async enqueue(subs: { clientId: string }[], packet: AnyPacket): Promise<void> {
    if (subs.length === 0) return;
    const text = encodePacket(queuedCopy(packet));
    const rows = [];
    for (const sub of subs) {
      const max = this.limits ? await this.limits.queuedPerSession(sub.clientId) : null;
      const n = this.queued.get(sub.clientId) ?? 0;
      if (max !== null && n >= max) {
        this.limits?.dropped?.(sub.clientId, packet.topic);
        continue;
      }
      this.queued.set(sub.clientId, n + 1);
      rows.push({
        client_id: sub.clientId,
        seq: ++this.seq,
        broker_id: String(packet.brokerId ?? ''),
        broker_counter: Number(packet.brokerCounter ?? 0),
        message_id: null,
        packet: text,
      });
    }
    if (rows.length) await this.db.insertInto('iot_mqtt_outgoing').values(rows).execute();
  }

  async update(clientId: string, packet: AnyPacket): Promise<void> {
    const byCounter = await this.db
      .updateTable('iot_mqtt_outgoing')
      .set({ message_id: packet.messageId })
      .where('client_id', '=', clientId)
      .where('broker_id', '=', String(packet.brokerId ?? ''))
      .where('broker_counter', '=', Number(packet.brokerCounter ?? 0))
      .executeTakeFirst();
    if (Number(byCounter.numUpdatedRows) > 0) return;
    // Another packet under this packet id (a PUBREL, or another broker's): it replaces the queued one.
    const other = await this.db
      .selectFrom('iot_mqtt_outgoing')
      .select('seq')
      .where('client_id', '=', clientId)
      .where('message_id', '=', packet.messageId)
      .where('broker_id', '!=', String(packet.brokerId ?? ''))
      .orderBy('seq')
      .executeTakeFirst();
    if (!other) throw new Error('no such packet');
    await this.db
      .updateTable('iot_mqtt_outgoing')
      .set({
        broker_id: String(packet.brokerId ?? ''),
        broker_counter: Number(packet.brokerCounter ?? 0),
        message_id: packet.messageId,
        packet: encodePacket(packet),
      })
      .where('client_id', '=', clientId)
      .where('seq', '=', other.seq)
      .execute();
  }

  async clearMessageId(clientId: string, packet: AnyPacket): Promise<AnyPacket | undefined> {
    const row = await this.db
      .selectFrom('iot_mqtt_outgoing')
      .select(['seq', 'packet', 'message_id'])
      .where('client_id', '=', clientId)
      .where('message_id', '=', packet.messageId)
      .orderBy('seq')
      .executeTakeFirst();
    if (!row) return undefined;
    const gone = await this.db
      .deleteFrom('iot_mqtt_outgoing')
      .where('client_id', '=', clientId)
      .where('seq', '=', row.seq)
      .executeTakeFirst();
    // Two acknowledgements racing: only the one that deleted the row counts it and answers it.
    if (Number(gone.numDeletedRows) === 0) return undefined;
    const n = (this.queued.get(clientId) ?? 1) - 1;
    if (n > 0) this.queued.set(clientId, n);
    else this.queued.delete(clientId);
    return withMessageId(decodePacket(row.packet), row.message_id);
  }

  stream(clientId: string): Readable {
    const rows = this.db
      .selectFrom('iot_mqtt_outgoing')
      .select(['packet', 'message_id'])
      .where('client_id', '=', clientId)
      .orderBy('seq')
      .execute();
    return Readable.from(
      (async function* () {
        for (const row of await rows) yield withMessageId(decodePacket(row.packet), row.message_id);
      })(),
    );
  }

  /** Every message queued for one session, gone with the session. */
  async wipe(clientId: string): Promise<void> {
    await this.db.deleteFrom('iot_mqtt_outgoing').where('client_id', '=', clientId).execute();
    this.queued.delete(clientId);
  }
}

function withMessageId(packet: AnyPacket, messageId: number | null): AnyPacket {
  if (messageId !== null) packet.messageId = messageId;
  else if (packet.qos > 0) packet.messageId = undefined;
  return packet;
}
