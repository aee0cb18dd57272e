import type { Kysely } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import type { AnyDb } from '../../kernel/store/unit-of-work.js';
import { planOf } from './catalogue.js';
import type { ServerSpec } from './drivers/driver.js';
import type { VpsServerKeysTable, VpsServersTable, VpsSnapshotsTable, VpsTables } from './migrations.js';

export class VpsRepo {
  constructor(readonly db: Kysely<VpsTables>) {}
  static of(store: Store) {
    return new VpsRepo(store.typed<VpsTables>());
  }
  static over(tx: AnyDb) {
    return new VpsRepo(tx);
  }

  async insertServer(row: VpsServersTable, keys: VpsServerKeysTable[]) {
    await this.db.insertInto('vps_servers').values(row).execute();
    if (keys.length) await this.db.insertInto('vps_server_keys').values(keys).execute();
  }
  servers(customerId: string) {
    return this.db
      .selectFrom('vps_servers')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  server(customerId: string, id: string) {
    return this.db
      .selectFrom('vps_servers')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  /** Every server of every customer (the namespace driver's start-up recovery). */
  allServers() {
    return this.db.selectFrom('vps_servers').selectAll().orderBy('id').execute();
  }
  byId(id: string) {
    return this.db.selectFrom('vps_servers').selectAll().where('id', '=', id).executeTakeFirst();
  }
  async usage(customerId: string): Promise<{ servers: number; vcpus: number }> {
    const r = await this.db
      .selectFrom('vps_servers')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('vcpus').as('v')])
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
    return { servers: Number(r?.n ?? 0), vcpus: Number(r?.v ?? 0) };
  }
  async updateServer(id: string, patch: Partial<VpsServersTable>) {
    await this.db.updateTable('vps_servers').set(patch).where('id', '=', id).execute();
  }
  /** Deletes the server's rows, backups and policy included; answers its backups' archive keys. */
  async deleteServer(id: string): Promise<string[]> {
    const backups = await this.db
      .selectFrom('vps_backups')
      .select(['storage_key'])
      .where('server_id', '=', id)
      .execute();
    await this.db.deleteFrom('vps_backup_policies').where('server_id', '=', id).execute();
    await this.db.deleteFrom('vps_backups').where('server_id', '=', id).execute();
    await this.db.deleteFrom('vps_snapshots').where('server_id', '=', id).execute();
    await this.db.deleteFrom('vps_server_keys').where('server_id', '=', id).execute();
    await this.db.deleteFrom('vps_servers').where('id', '=', id).execute();
    return backups.map((b) => b.storage_key);
  }
  keysOf(serverId: string) {
    return this.db.selectFrom('vps_server_keys').selectAll().where('server_id', '=', serverId).execute();
  }
  /** What the driver is told about a server: its row, its plan and the public keys it carries. */
  async specOf(row: VpsServersTable): Promise<ServerSpec> {
    const keys = await this.keysOf(row.id);
    return {
      id: row.id,
      customerId: row.customer_id,
      hostname: row.hostname,
      plan: planOf(row.plan_code)!,
      osTemplate: row.os_template,
      publicKeys: keys.map((k) => k.public_key),
    };
  }
  /** How many servers of the customer carry each of these key fingerprints. */
  async keyUsage(customerId: string, fingerprints: string[]): Promise<Map<string, number>> {
    if (!fingerprints.length) return new Map();
    const rows = await this.db
      .selectFrom('vps_server_keys')
      .select((eb) => ['fingerprint', eb.fn.countAll<number>().as('n')])
      .where('customer_id', '=', customerId)
      .where('fingerprint', 'in', fingerprints)
      .groupBy('fingerprint')
      .execute();
    return new Map(rows.map((r) => [r.fingerprint, Number(r.n)]));
  }

  snapshots(serverId: string) {
    return this.db
      .selectFrom('vps_snapshots')
      .selectAll()
      .where('server_id', '=', serverId)
      .orderBy('created_at')
      .orderBy('name')
      .execute();
  }
  snapshot(serverId: string, name: string) {
    return this.db
      .selectFrom('vps_snapshots')
      .selectAll()
      .where('server_id', '=', serverId)
      .where('name', '=', name)
      .executeTakeFirst();
  }
  async insertSnapshot(row: VpsSnapshotsTable) {
    await this.db.insertInto('vps_snapshots').values(row).execute();
  }
  async deleteSnapshot(serverId: string, name: string) {
    await this.db
      .deleteFrom('vps_snapshots')
      .where('server_id', '=', serverId)
      .where('name', '=', name)
      .execute();
  }
}
