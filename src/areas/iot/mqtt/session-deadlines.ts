import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { MqttSessionTables } from './session-tables.js';

/** setTimeout's longest delay; a later deadline is re-armed when this one fires. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** What a session needs from the broker and its persistence to be ended. */
export interface SessionEnds {
  /** Deletes everything kept for the session (subscriptions, queued messages, will). */
  wipe(clientId: string): Promise<void>;
  /** Whether a connection holds the session in this process now. */
  connected(clientId: string): boolean;
}

/**
 * MQTT 5 Session Expiry, kept in the store so that it holds across a restart or a kill -9.
 * aedes times a session's expiry in memory from its disconnect; a restart forgot those timers,
 * so a session that should have ended was kept until the device came back, and resumed. Here
 * each v5 session with an interval has a row: its interval while connected, and its deadline once
 * disconnected. At start, sessions past their deadline are wiped; the others are timed again, and
 * those whose connection died with the old process (no deadline yet) count from this start,
 * since when exactly they were cut is not known. A login also settles an overdue deadline first,
 * so a late timer cannot resume a session that had ended. Scaled out, every process times the
 * deadlines it sees and each ending reads the row again, so a session another process holds by
 * now is left alone; a session without a deadline is taken as held by another process.
 */
export class SessionDeadlines {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Writes per client id, in the order the broker's events came: a takeover's two must not swap. */
  private readonly chains = new Map<string, Promise<void>>();
  private stopped = false;

  constructor(
    private readonly db: Kysely<MqttSessionTables>,
    private readonly ends: SessionEnds,
    private readonly log: Logger,
    /**
     * Scaled out (Redis), other processes share the sessions: a session with no deadline may be
     * connected to one of them, so it is not timed from this start (see resume()).
     */
    private readonly shared = false,
    private readonly now: () => number = Date.now,
  ) {}

  /** At start, before the listeners accept anyone: wipes what expired, times the rest. */
  async resume(): Promise<void> {
    const now = this.now();
    for (const row of await this.db.selectFrom('iot_mqtt_session_expiry').selectAll().execute()) {
      let deadline = row.expires_at === null ? null : Number(row.expires_at);
      if (deadline === null && this.shared) continue;
      if (deadline === null) {
        deadline = now + Number(row.interval_s) * 1000;
        await this.db
          .updateTable('iot_mqtt_session_expiry')
          .set({ expires_at: deadline })
          .where('client_id', '=', row.client_id)
          .execute();
      }
      if (deadline <= now) await this.end(row.client_id);
      else this.arm(row.client_id, deadline);
    }
  }

  /** A connection took the session: it no longer runs out, and is kept if its interval is above 0. */
  connected(clientId: string, version: number, intervalS: number): void {
    this.disarm(clientId);
    this.serial(clientId, async () => {
      if (version !== 5 || intervalS === 0) {
        await this.db.deleteFrom('iot_mqtt_session_expiry').where('client_id', '=', clientId).execute();
        return;
      }
      await this.db
        .insertInto('iot_mqtt_session_expiry')
        .values({ client_id: clientId, interval_s: intervalS, expires_at: null })
        .onConflict((oc) => oc.column('client_id').doUpdateSet({ interval_s: intervalS, expires_at: null }))
        .execute();
    });
  }

  /** The connection ended: an MQTT 5 session runs out after its interval (the DISCONNECT's, if it gave one). */
  disconnected(clientId: string, version: number, intervalS: number): void {
    if (version !== 5) return;
    if (intervalS === 0) {
      this.serial(clientId, () =>
        this.db
          .deleteFrom('iot_mqtt_session_expiry')
          .where('client_id', '=', clientId)
          .execute()
          .then(() => {}),
      );
      return;
    }
    const deadline = this.now() + intervalS * 1000;
    this.serial(clientId, async () => {
      await this.db
        .insertInto('iot_mqtt_session_expiry')
        .values({ client_id: clientId, interval_s: intervalS, expires_at: deadline })
        .onConflict((oc) =>
          oc.column('client_id').doUpdateSet({ interval_s: intervalS, expires_at: deadline }),
        )
        .execute();
    });
    this.arm(clientId, deadline);
  }

  /** Before a login resumes a session: one whose deadline passed is ended first. */
  async settle(clientId: string): Promise<void> {
    await (this.chains.get(clientId) ?? Promise.resolve());
    const row = await this.db
      .selectFrom('iot_mqtt_session_expiry')
      .select('expires_at')
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    if (row && row.expires_at !== null && Number(row.expires_at) <= this.now()) await this.end(clientId);
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private arm(clientId: string, deadline: number): void {
    this.disarm(clientId);
    const timer = setTimeout(
      () => {
        this.timers.delete(clientId);
        if (this.stopped || this.ends.connected(clientId)) return;
        if (deadline > this.now()) return this.arm(clientId, deadline);
        void this.settle(clientId).catch((err) =>
          this.log.error({ err, client: clientId }, 'mqtt: session expiry'),
        );
      },
      Math.min(Math.max(0, deadline - this.now()), LONGEST_TIMER_MS),
    );
    timer.unref();
    this.timers.set(clientId, timer);
  }

  private disarm(clientId: string): void {
    const timer = this.timers.get(clientId);
    if (timer) clearTimeout(timer);
    this.timers.delete(clientId);
  }

  private async end(clientId: string): Promise<void> {
    await this.ends.wipe(clientId);
    await this.db.deleteFrom('iot_mqtt_session_expiry').where('client_id', '=', clientId).execute();
    this.log.info({ client: clientId }, 'mqtt: session expired');
  }

  private serial(clientId: string, write: () => Promise<void>): void {
    const next = (this.chains.get(clientId) ?? Promise.resolve())
      .then(write)
      .catch((err) => this.log.error({ err, client: clientId }, 'mqtt: session expiry not kept'));
    this.chains.set(clientId, next);
    void next.then(() => {
      if (this.chains.get(clientId) === next) this.chains.delete(clientId);
    });
  }
}
