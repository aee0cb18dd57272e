import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { PassThrough, type Readable, type Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type { Logger } from 'pino';
import type { Principal } from '../../../kernel/auth/principal.js';
import { type Clock, isoOf as iso } from '../../../kernel/clock.js';
import { newId } from '../../../kernel/ids.js';
import type { SecretBox } from '../../../kernel/secrets.js';
import type { Units } from '../../../kernel/store/unit-of-work.js';
import type { DatabaseRef, DbType } from '../drivers/driver.js';
import type { DatabasesTable, SnapshotsTable } from '../migrations.js';
import type { DatabasesRepo } from '../repo.js';
import { dbErrors } from '../rules.js';
import type { DatabasesService } from '../service.js';
import type { SnapshotStore, SnapshotStoreKind } from './snapshot-store.js';

/** How often a process taking a snapshot says it is alive, and how long silence means it died. */
const HEARTBEAT_MS = 30_000;
const ABANDONED_AFTER_MS = 5 * 60_000;

/**
 * Snapshots (logical dumps: pg_dump / mariadb-dump, gzip-compressed while they stream into
 * Fjord's object storage, and AES-256-GCM encrypted for the encrypted tier), downloads, and
 * restores into the same or a new database. `stores.objects` takes every new dump;
 * `stores.fs` only serves older ones. Automatic snapshots come from `backup-policy.ts`.
 */
export class SnapshotService {
  private readonly repo: DatabasesRepo;
  constructor(
    private readonly data: Units<DatabasesRepo>,
    private readonly dbs: DatabasesService,
    private readonly stores: Record<SnapshotStoreKind, SnapshotStore>,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly planOf: (customerId: string) => Promise<string>,
  ) {
    this.repo = data.read;
  }

  view(row: DatabasesTable, s: SnapshotsTable) {
    return {
      snapshot_id: s.id,
      db_name: row.technical_name,
      db_type: row.db_type,
      name: s.name,
      description: s.description,
      kind: s.kind,
      status: s.status,
      format: s.format,
      encrypted: s.sealed_key !== null,
      size_bytes: s.size_bytes,
      created_at: iso(s.created_at)!,
      completed_at: iso(s.completed_at),
    };
  }

  async list(customerId: string, dbType: DbType, name: string) {
    const row = await this.dbs.get(customerId, dbType, name);
    const snaps = await this.repo.snapshots(row.id);
    const plan = await this.planOf(customerId);
    return {
      snapshots: snaps.map((s) => this.view(row, s)),
      total: snaps.length,
      max_snapshots: this.dbs.quotas.of(plan).snapshotsPerDatabase,
    };
  }

  async create(
    principal: Principal | null,
    row: DatabasesTable,
    input: { name?: string; description?: string; kind?: 'manual' | 'automatic' },
  ) {
    const kind = input.kind ?? 'manual';
    const now = this.clock.nowMs();
    const id = newId();
    const encrypted = row.tier === 'encrypted';
    const snap: SnapshotsTable = {
      id,
      database_id: row.id,
      customer_id: row.customer_id,
      name: input.name ?? `${kind}-${new Date(now).toISOString().replace(/[:.]/g, '-')}`,
      description: input.description ?? null,
      kind,
      status: 'creating',
      format: encrypted ? 'sql.gz.aes-256-gcm' : 'sql.gz',
      storage_key: `${row.customer_id}/${row.id}/${id}.sql.gz${encrypted ? '.enc' : ''}`,
      store: 'objects',
      sealed_key: null,
      size_bytes: null,
      error: null,
      created_at: now,
      completed_at: null,
      heartbeat_at: Date.now(),
    };
    // Manual snapshots count against the plan; automatic ones are bounded by the policy's retention.
    const plan = kind === 'manual' ? await this.planOf(row.customer_id) : null;
    const limit = plan ? this.dbs.quotas.of(plan).snapshotsPerDatabase : null;
    // Counted and inserted under the database's lock: two requests at once cannot both take the
    // last place.
    await this.data.run([`database-snapshots:${row.id}`], async (repo) => {
      if (limit !== null && (await repo.keptSnapshots(row.id)) >= limit)
        throw dbErrors.snapshotLimit(limit, plan!);
      await repo.insertSnapshot(snap);
    });
    const beat = setInterval(() => {
      this.repo.updateSnapshot(id, { heartbeat_at: Date.now() }).catch(() => {});
    }, HEARTBEAT_MS);
    beat.unref();
    const dump = new PassThrough();
    const key = encrypted ? randomBytes(32) : null;
    const iv = randomBytes(12);
    const cipher = key ? createCipheriv('aes-256-gcm', key, iv) : null;
    // pipeline, not .pipe: a failed dump destroys every stage, down to the store's write.
    const stages: Transform[] = cipher ? [createGzip(), cipher] : [createGzip()];
    const body: Readable = stages[stages.length - 1]!;
    pipeline([dump, ...stages]).catch(() => {}); // its error reaches the store through `body`
    try {
      // Both sides settle before anything is judged: a failed dump must not leave a file the
      // store finishes writing after the cleanup below.
      const dumped = this.dbs
        .onServer(row.db_type as DbType, (d) => d.dump(this.dbs.ref(row), dump))
        .catch((err) => {
          dump.destroy(err as Error);
          throw err;
        });
      const [put, dumpResult] = await Promise.allSettled([
        this.stores[snap.store].put(snap.storage_key, body),
        dumped,
      ]);
      if (dumpResult.status === 'rejected') throw dumpResult.reason;
      if (put.status === 'rejected') throw dbErrors.snapshotStoreFailed(put.reason);
      snap.size_bytes = put.value;
    } catch (err) {
      dump.destroy();
      await this.stores[snap.store].delete(snap.storage_key).catch(() => {});
      await this.repo.updateSnapshot(id, {
        status: 'failed',
        error: (err as Error).message.slice(0, 500),
        heartbeat_at: null,
      });
      throw err;
    } finally {
      clearInterval(beat);
    }
    snap.sealed_key =
      key && cipher
        ? this.secrets.seal(
            JSON.stringify({
              key: key.toString('base64'),
              iv: iv.toString('base64'),
              tag: cipher.getAuthTag().toString('base64'),
            }),
          )
        : null;
    snap.status = 'available';
    snap.completed_at = this.clock.nowMs();
    await this.repo.updateSnapshot(id, {
      status: snap.status,
      size_bytes: snap.size_bytes,
      sealed_key: snap.sealed_key,
      completed_at: snap.completed_at,
      heartbeat_at: null,
    });
    await this.dbs.record(principal, row, 'database.snapshot_created', {
      snapshot_id: id,
      kind,
      size_bytes: snap.size_bytes,
    });
    return this.view(row, snap);
  }

  async remove(principal: Principal, dbType: DbType, name: string, snapshotId: string) {
    const row = await this.dbs.get(principal.customerId, dbType, name);
    const snap = await this.repo.snapshot(principal.customerId, snapshotId);
    if (!snap || snap.database_id !== row.id) throw dbErrors.snapshotNotFound();
    await this.drop(snap);
    await this.dbs.record(principal, row, 'database.snapshot_deleted', { snapshot_id: snapshotId });
  }

  /** Deletes one snapshot, row and dump (the backup policy prunes with it). */
  async drop(snap: SnapshotsTable) {
    await this.repo.deleteSnapshot(snap.id);
    await this.stores[snap.store].delete(snap.storage_key);
  }

  /** Deletes the dumps of a database's snapshots (the rows go with the database). */
  async dropAll(databaseId: string) {
    for (const s of await this.repo.snapshots(databaseId))
      await this.stores[s.store].delete(s.storage_key).catch(() => {});
  }

  /** The snapshot's dump as plain SQL: decrypted and decompressed while it streams. */
  private async open(snap: SnapshotsTable): Promise<Readable> {
    return this.decoded(snap, [createGunzip()]);
  }

  /**
   * The stored bytes, decrypted when the snapshot is sealed, then through `after`. A read or
   * decryption error ends the returned stream with that error (never leaves it waiting).
   */
  private async decoded(snap: SnapshotsTable, after: Transform[]): Promise<Readable> {
    const raw = await this.stores[snap.store].get(snap.storage_key);
    const stages: Transform[] = [...after];
    if (snap.sealed_key) {
      const k = JSON.parse(this.secrets.open(snap.sealed_key)) as { key: string; iv: string; tag: string };
      const decipher = createDecipheriv(
        'aes-256-gcm',
        Buffer.from(k.key, 'base64'),
        Buffer.from(k.iv, 'base64'),
      );
      decipher.setAuthTag(Buffer.from(k.tag, 'base64'));
      stages.unshift(decipher);
    }
    const out = new PassThrough();
    pipeline([raw, ...stages, out]).catch((err) => out.destroy(err));
    return out;
  }

  /**
   * The snapshot as a gzip file of plain SQL (decrypted for the encrypted tier), for the
   * customer to keep or load elsewhere: `gunzip -c file | psql …` / `| mariadb …`.
   */
  async download(customerId: string, dbType: DbType, name: string, snapshotId: string) {
    const row = await this.dbs.get(customerId, dbType, name);
    const snap = await this.repo.snapshot(customerId, snapshotId);
    if (!snap || snap.database_id !== row.id) throw dbErrors.snapshotNotFound();
    if (snap.status !== 'available') throw dbErrors.snapshotNotReady();
    const body = await this.decoded(snap, []).catch((err) => {
      throw dbErrors.snapshotUnreadable(err);
    });
    return { filename: `${row.technical_name}-${snap.id}.sql.gz`, body };
  }

  /**
   * A restore into the database itself: the dump is replayed into a staging database first, so a
   * replay that fails halfway leaves the database as it was. Then the staging copy takes its
   * place (PostgreSQL renames it), or, where the engine cannot rename (MariaDB), the database is
   * emptied and the same dump — which has just replayed cleanly — is replayed into it.
   */
  private async restoreInPlace(dbType: DbType, db: DatabaseRef, snap: SnapshotsTable) {
    await this.dbs.onServer(dbType, async (d) => {
      const staging = await d.createStaging(db);
      try {
        await d.restore(staging, await this.dump(snap));
      } catch (err) {
        await d
          .dropStaging(staging)
          .catch((e) => this.log.warn({ err: e }, 'dropping a restore staging database failed'));
        throw err;
      }
      if (await d.swapIn(db, staging)) return;
      await d.dropStaging(staging);
      await d.recreateEmpty(db);
      await d.restore(db, await this.dump(snap));
    });
  }

  /** The snapshot's SQL, decompressed (and decrypted); a missing or damaged one is a clear error. */
  private dump(snap: SnapshotsTable) {
    return this.open(snap).catch((err) => {
      throw dbErrors.snapshotUnreadable(err);
    });
  }

  async restore(
    principal: Principal,
    dbType: DbType,
    name: string,
    snapshotId: string,
    targetName: string | null,
  ) {
    const source = await this.dbs.get(principal.customerId, dbType, name);
    const snap = await this.repo.snapshot(principal.customerId, snapshotId);
    if (!snap || snap.database_id !== source.id) throw dbErrors.snapshotNotFound();
    if (snap.status !== 'available') throw dbErrors.snapshotNotReady();
    // Read the whole snapshot once first (GCM tag, gzip CRC): a damaged or missing dump must
    // fail here, before a database is created or the current contents are dropped.
    try {
      await pipeline(await this.open(snap), new Writable({ write: (_c, _e, done) => done() }));
    } catch (err) {
      throw dbErrors.snapshotUnreadable(err);
    }
    let target = source;
    let created: Awaited<ReturnType<DatabasesService['create']>> | null = null;
    if (targetName) {
      created = await this.dbs.create(principal, {
        form: 'A',
        dbType,
        name: targetName,
        description: `Restored from snapshot ${snap.id} of ${source.technical_name}`,
        tier: source.tier as 'standard' | 'encrypted',
        customerId: null,
      });
      target = created.row;
      try {
        await this.dbs.onServer(dbType, async (d) =>
          d.restore(this.dbs.ref(created!.row), await this.dump(snap)),
        );
      } catch (err) {
        // A half-restored copy is not left behind to be mistaken for the snapshot's contents.
        await this.dbs
          .delete(principal, dbType, created.row.technical_name)
          .catch((e) => this.log.warn({ err: e }, 'removing a failed restore target failed'));
        throw err;
      }
    } else await this.restoreInPlace(dbType, this.dbs.ref(source), snap);
    await this.dbs.record(principal, target, 'database.restored', {
      snapshot_id: snap.id,
      source_db_name: source.technical_name,
    });
    return {
      success: true,
      message: `Snapshot ${snap.id} restored into ${target.technical_name}.`,
      db_type: dbType,
      db_name: target.technical_name,
      snapshot_id: snap.id,
      source_db_name: source.technical_name,
      restored_at: iso(this.clock.nowMs())!,
      new_database: created
        ? {
            db_name: created.row.technical_name,
            username: created.row.username,
            password: created.password!,
            host: created.host,
            port: created.port,
            connection_string: created.connection_string,
          }
        : null,
    };
  }

  /**
   * Job: marks `failed` the snapshots whose taking process stopped (a crash, a kill) — without
   * this they would stay `creating` for ever. Their partial bytes were never committed.
   */
  async failAbandoned(): Promise<number> {
    const n = await this.repo.failAbandonedSnapshots(
      Date.now() - ABANDONED_AFTER_MS,
      'interrupted: the process taking the snapshot stopped',
    );
    if (n > 0) this.log.warn({ snapshots: n }, 'snapshots cut off by a stopped process marked failed');
    return n;
  }
}
