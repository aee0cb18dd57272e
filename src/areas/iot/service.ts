import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Clock } from '../../kernel/clock.js';
import type { PageRequest } from '../../kernel/http/pagination.js';
import { newId, randomString } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import { GroupCommit } from '../../kernel/store/group-commit.js';
import type { Store } from '../../kernel/store/store.js';
import { ActivityRepo, DAY_MS, type IngestItem } from './activity.js';
import { type Checked, Datapoints } from './catalogue/datapoints.js';
import { deviceView } from './device-view.js';
import { iotErrors } from './errors.js';
import type { IotDevicesTable } from './migrations.js';
import { type DeviceFilter, IotRepo } from './repo.js';
import { parseRevocation, REVOKE_CHANNEL, revocationNotice } from './revocation-notice.js';
import { DEVICE_ID_PATTERN } from './schemas.js';
import type { TelemetryPoint } from './telemetry.js';
import type { TelemetryStream } from './telemetry-stream.js';
import { writeTelemetryBatch } from './telemetry-writes.js';

const DEVICE_ID = new RegExp(DEVICE_ID_PATTERN);

export interface MqttAddress {
  host: () => string;
  port: () => number;
}

export interface DeviceInput {
  name: string;
  device_id?: string;
  description?: string;
  device_type?: string;
  firmware_version?: string;
  metadata?: Record<string, unknown>;
}

const COMMAND_CHANNEL = 'fjord_iot_command';
/** A command travels in a store notice (PostgreSQL's NOTIFY takes under 8000 bytes). */
const MAX_COMMAND_BYTES = 6000;

export interface DevicePatch {
  name?: string;
  description?: string | null;
  device_type?: string | null;
  firmware_version?: string | null;
  metadata?: Record<string, unknown>;
  is_active?: boolean;
}

export const hashMqttPassword = (password: string): string =>
  createHash('sha256').update(password).digest('hex');
/** The topic tree a device owns: it publishes and subscribes only below it. */
export const topicRootOf = (mqttUsername: string): string => `devices/${mqttUsername}`;

/** The device side of IoT: devices and their MQTT credentials. */
export class IotService {
  readonly repo: IotRepo;
  readonly activity: ActivityRepo;
  /** Definitions telemetry is checked against (the datapoints API edits them). */
  readonly datapoints: Datapoints;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly identity: IdentityService,
    private readonly limits: Limits,
    private readonly mqtt: MqttAddress,
    /** Where connects, disconnects, telemetry and deletions are announced (the seam for rules). */
    readonly stream: TelemetryStream,
  ) {
    this.repo = IotRepo.of(store);
    this.activity = ActivityRepo.of(store);
    this.datapoints = new Datapoints(store, clock, limits);
    this.listen();
  }

  async create(customerId: string, input: DeviceInput) {
    const deviceId = input.device_id ?? randomUUID();
    if (!DEVICE_ID.test(deviceId)) throw iotErrors.invalidDeviceId();
    const plan = (await this.identity.getCustomer(customerId))?.plan ?? 'free';
    const max = this.limits.of('iot.devices', plan);
    const password = newPassword();
    const now = this.clock.nowMs();
    const row: IotDevicesTable = {
      id: newId(),
      customer_id: customerId,
      device_id: deviceId,
      name: input.name,
      description: input.description ?? null,
      device_type: input.device_type ?? null,
      is_active: 1,
      firmware_version: input.firmware_version ?? null,
      metadata: JSON.stringify(input.metadata ?? {}),
      mqtt_username: `d_${randomString(20).toLowerCase()}`,
      mqtt_password_hash: hashMqttPassword(password),
      is_online: 0,
      last_seen: null,
      created_at: now,
      updated_at: now,
      profile_id: null,
      battery_level: null,
      signal_strength: null,
      last_telemetry_at: null,
    };
    // Counted, checked for a clash and inserted under the customer's lock: of many creates at
    // once exactly the room left succeeds, and two creates of one device_id cannot both pass.
    await this.store.unitOfWork({ locks: [`iot:devices:${customerId}`] }, async ({ tx }) => {
      const repo = IotRepo.over(tx);
      if (await repo.device(customerId, deviceId)) throw iotErrors.deviceExists(deviceId);
      if (max !== null && (await repo.countDevices(customerId)) >= max) throw iotErrors.quota(max, plan);
      await repo.insertDevice(row);
    });
    return { ...deviceView(row, [], undefined), mqtt_credentials: this.credentials(row, password) };
  }

  async list(customerId: string, filter: DeviceFilter, page: PageRequest) {
    const { rows, total } = await this.repo.list(customerId, filter, page.limit, page.offset);
    const tags = await this.repo.tagsOf(rows.map((r) => r.id));
    const activity = await this.activity.summaries(
      rows.map((r) => r.id),
      this.clock.nowMs() - DAY_MS,
    );
    return {
      devices: rows.map((r) => deviceView(r, tags.get(r.id) ?? [], activity.get(r.id))),
      total,
      page: page.page,
      page_size: page.size,
      has_more: page.offset + rows.length < total,
    };
  }

  async get(customerId: string, deviceId: string) {
    const row = await this.row(customerId, deviceId);
    const activity = await this.activity.summaries([row.id], this.clock.nowMs() - DAY_MS);
    return deviceView(row, (await this.repo.tagsOf([row.id])).get(row.id) ?? [], activity.get(row.id));
  }

  /** `metadata` replaces the stored object; `is_active: false` refuses the device's next connection. */
  async update(customerId: string, deviceId: string, patch: DevicePatch) {
    const row = await this.row(customerId, deviceId);
    const changes: Partial<IotDevicesTable> = { updated_at: this.clock.nowMs() };
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.description !== undefined) changes.description = patch.description;
    if (patch.device_type !== undefined) changes.device_type = patch.device_type;
    if (patch.firmware_version !== undefined) changes.firmware_version = patch.firmware_version;
    if (patch.metadata !== undefined) changes.metadata = JSON.stringify(patch.metadata);
    if (patch.is_active !== undefined) changes.is_active = patch.is_active ? 1 : 0;
    await this.repo.updateDevice(row.id, changes);
    if (patch.is_active === false) this.revoke(row.mqtt_username);
    return this.get(customerId, deviceId);
  }

  /** Revokes the credentials for good: the row goes, so the broker refuses the next login. */
  async remove(customerId: string, deviceId: string) {
    const row = await this.row(customerId, deviceId);
    // Tags, group memberships, telemetry and the device go together or not at all.
    const deleted = await this.store.unitOfWork({ locks: [`iot:device:${row.id}`] }, ({ tx }) =>
      IotRepo.over(tx).deleteDevice(row.id),
    );
    if (!deleted) throw iotErrors.deviceNotFound();
    this.revoke(row.mqtt_username);
    this.stream.emit({
      kind: 'deleted',
      customer_id: customerId,
      device_id: deviceId,
      at: this.clock.nowMs(),
    });
  }

  /** A new password (the old one stops working at once); username and topics stay. */
  async rotateCredentials(customerId: string, deviceId: string) {
    const row = await this.row(customerId, deviceId);
    const password = newPassword();
    await this.repo.updateDevice(row.id, {
      mqtt_password_hash: hashMqttPassword(password),
      updated_at: this.clock.nowMs(),
    });
    this.revoke(row.mqtt_username);
    return this.credentials(row, password);
  }

  // --- telemetry --------------------------------------------------------------------------------

  /** Fjord's clock (the emulator's may run ahead): telemetry without `ts` is stamped with it. */
  now(): number {
    return this.clock.nowMs();
  }

  /**
   * Checks a message's points against the datapoint definitions and stores those that pass;
   * resolves only once they are committed (the broker acknowledges a QoS 1 message after this).
   * Many messages at once share one transaction, with the hourly counters and the device's
   * latest state written once per device in it. Without a promise of its own while the
   * definitions are cached: this runs for every message a device sends.
   */
  ingest(device: IotDevicesTable, points: TelemetryPoint[]): Promise<Checked['rejected']> {
    try {
      const checked = this.datapoints.checkNow(device.customer_id, points);
      if (checked !== undefined) return this.storeChecked(device, checked);
      return this.datapoints.check(device.customer_id, points).then((c) => this.storeChecked(device, c));
    } catch (err) {
      // Called from the broker's callbacks: a failure is the promise's, as from an async function.
      return Promise.reject(err);
    }
  }

  private storeChecked(
    device: IotDevicesTable,
    { accepted, rejected }: Checked,
  ): Promise<Checked['rejected']> {
    const at = this.clock.nowMs();
    const item = { device_pk: device.id, at, points: accepted, rejected: rejected.length };
    return this.ingestor.submit([item]).then(() => {
      if (accepted.length > 0) this.announce(device, accepted, at);
      return rejected;
    });
  }

  /** The stored points to the stream, as wanted: one event per point, then the message's. */
  private announce(device: IotDevicesTable, accepted: TelemetryPoint[], at: number): void {
    const { customer_id, device_id } = device;
    if (this.stream.wantsPoints)
      for (const p of accepted)
        this.stream.emit({ kind: 'telemetry', customer_id, device_id, key: p.key, value: p.value, ts: p.ts });
    if (!this.stream.wantsMessagesOf(customer_id)) return;
    const values: Record<string, TelemetryPoint['value']> = {};
    for (const p of accepted) values[p.key] = p.value;
    this.stream.emit({ kind: 'message', customer_id, device_id, values, at });
  }

  private readonly ingestor = new GroupCommit<IngestItem>(
    (items) => this.store.unitOfWork({}, async ({ tx }) => writeTelemetryBatch(tx, items)),
    2000,
  );

  /**
   * A device reports its attributes on `…/attributes`: a JSON object whose `firmware_version` (a
   * string) sets the device's, and whose other keys are merged into its metadata. Answers false
   * for a payload that is not such an object (counted as malformed, nothing changes).
   */
  async reportAttributes(device: IotDevicesTable, payload: Buffer): Promise<boolean> {
    let doc: unknown;
    try {
      doc = JSON.parse(payload.toString('utf8'));
    } catch {
      return false;
    }
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return false;
    const { firmware_version, ...rest } = doc as Record<string, unknown>;
    if (
      firmware_version !== undefined &&
      (typeof firmware_version !== 'string' || firmware_version.length > 100)
    )
      return false;
    if (payload.length > 16 * 1024) return false;
    await this.store.unitOfWork({ locks: [`iot:device:${device.id}`] }, async ({ tx }) => {
      const repo = IotRepo.over(tx);
      const row = await repo.byUsername(device.mqtt_username);
      if (!row) return;
      const metadata = { ...(JSON.parse(row.metadata) as Record<string, unknown>), ...rest };
      await repo.updateDevice(row.id, {
        metadata: JSON.stringify(metadata),
        ...(typeof firmware_version === 'string' ? { firmware_version } : {}),
        updated_at: this.clock.nowMs(),
      });
    });
    return true;
  }

  /** The broker saw the device connect or go; kept in the store so every API process sees it. */
  async connection(device: IotDevicesTable, online: boolean, reason = 'disconnect') {
    const at = this.clock.nowMs();
    await this.store.unitOfWork({}, async ({ tx }) => {
      await IotRepo.over(tx).setConnection(device.id, online, at);
      const activity = ActivityRepo.over(tx);
      await (online ? activity.openSession(device.id, at) : activity.closeSessions(device.id, at));
    });
    const base = { customer_id: device.customer_id, device_id: device.device_id, at };
    this.stream.emit(online ? { kind: 'connected', ...base } : { kind: 'disconnected', ...base, reason });
  }

  /** Set by the broker of this process when it runs (role `mqtt`); commands go through it. */
  commandSink: ((username: string, topic: string, payload: string) => Promise<boolean>) | null = null;

  /**
   * Sends a command to the device's commands topic at QoS 1, through whichever `mqtt` process
   * holds the device's connection: this process's broker when it does, else a store notice every
   * broker hears (LISTEN/NOTIFY on PostgreSQL). `sent` means a broker was handed it; delivery is
   * the device's PUBACK to that broker. A device that is not connected answers 409.
   */
  async sendCommand(customerId: string, deviceId: string, command: { name: string; params?: unknown }) {
    const row = await this.row(customerId, deviceId);
    const id = newId();
    const sentAt = new Date(this.clock.nowMs()).toISOString();
    const topic = `${topicRootOf(row.mqtt_username)}/commands`;
    const payload = JSON.stringify({ id, name: command.name, params: command.params ?? {}, sent_at: sentAt });
    if (Buffer.byteLength(payload) > MAX_COMMAND_BYTES) throw iotErrors.commandTooLarge(MAX_COMMAND_BYTES);
    const here = (await this.commandSink?.(row.mqtt_username, topic, payload)) ?? false;
    if (!here) {
      if (row.is_online !== 1) throw iotErrors.deviceOffline(deviceId);
      await this.store.publish(
        COMMAND_CHANNEL,
        JSON.stringify({ username: row.mqtt_username, topic, payload }),
      );
    }
    return {
      command_id: id,
      device_id: deviceId,
      topic,
      name: command.name,
      status: 'sent' as const,
      sent_at: sentAt,
    };
  }

  /**
   * Logins that must end now (deleted, deactivated, rotated): the broker in this process listens.
   * Each carries the wall-clock time the change was committed: only sessions whose login began
   * before it end. The notice also comes back to this process later (PostgreSQL's NOTIFY under
   * load takes its time), by when the device may have logged in again with its new password.
   */
  readonly revocations = new EventEmitter<{ revoke: [username: string, at: number] }>();

  /** Ends the device's live connection here at once, and in every other `mqtt` process by notice. */
  private revoke(username: string) {
    const at = Date.now();
    this.revocations.emit('revoke', username, at);
    this.store.publish(REVOKE_CHANNEL, revocationNotice({ username, at })).catch(() => {});
  }

  /** Hears revocations and commands other processes sent (only a process with a broker acts). */
  private listen() {
    this.store.subscribe(REVOKE_CHANNEL, (notice) => {
      const { username, at } = parseRevocation(notice);
      if (username) this.revocations.emit('revoke', username, at);
    });
    this.store.subscribe(COMMAND_CHANNEL, (notice) => {
      if (!notice || !this.commandSink) return;
      const { username, topic, payload } = JSON.parse(notice) as {
        username: string;
        topic: string;
        payload: string;
      };
      void this.commandSink(username, topic, payload).catch(() => {});
    });
  }

  // --- the broker's side ------------------------------------------------------------------------

  /**
   * The device an MQTT login belongs to, or null: unknown username, wrong password, a
   * deactivated device or a suspended customer. `reason` tells the broker which CONNACK to send.
   */
  async authenticate(
    username: string,
    password: string,
  ): Promise<{ device: IotDevicesTable } | { refused: 'bad_credentials' | 'not_authorised' }> {
    const row = await this.repo.byUsername(username);
    const given = Buffer.from(hashMqttPassword(password), 'hex');
    // The comparison runs (against a dummy) for unknown usernames too, so timing tells nothing.
    const want = Buffer.from(row?.mqtt_password_hash ?? '0'.repeat(64), 'hex');
    const match = want.length === given.length && timingSafeEqual(want, given);
    if (!row || !match) return { refused: 'bad_credentials' };
    if (row.is_active !== 1 || !(await this.identity.isActive(row.customer_id)))
      return { refused: 'not_authorised' };
    return { device: row };
  }

  /** Whether a customer may use its devices now (not suspended): the broker asks for orphaned wills. */
  activeCustomer(customerId: string): Promise<boolean> {
    return this.identity.isActive(customerId);
  }

  // --- helpers ----------------------------------------------------------------------------------

  /** The customer's device, or 404. */
  async row(customerId: string, deviceId: string) {
    const row = await this.repo.device(customerId, deviceId);
    if (!row) throw iotErrors.deviceNotFound();
    return row;
  }

  private credentials(row: IotDevicesTable, password: string) {
    return {
      username: row.mqtt_username,
      password,
      client_id: row.mqtt_username,
      host: this.mqtt.host(),
      port: this.mqtt.port(),
      topic_root: topicRootOf(row.mqtt_username),
    };
  }
}

const newPassword = (): string => randomString(32);
