import type { Kysely } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import type { AnyDb } from '../../kernel/store/unit-of-work.js';
import type {
  AppsAppsTable,
  AppsDomainsTable,
  AppsImageUploadsTable,
  AppsRevisionsTable,
  AppsTables,
  AppsVolumeSnapshotsTable,
  AppsVolumesTable,
} from './migrations.js';

export class AppsRepo {
  constructor(readonly db: Kysely<AppsTables>) {}
  static of(store: Store) {
    return new AppsRepo(store.typed<AppsTables>());
  }
  static over(tx: AnyDb) {
    return new AppsRepo(tx);
  }

  async insertApp(row: AppsAppsTable) {
    await this.db.insertInto('apps_apps').values(row).execute();
  }
  apps(customerId: string, limit = 10_000, offset = 0) {
    return this.db
      .selectFrom('apps_apps')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute();
  }
  async countApps(customerId: string): Promise<number> {
    const r = await this.db
      .selectFrom('apps_apps')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }
  /** An app of the customer by id or by name (names are at most 30 characters, ids 36). */
  app(customerId: string, idOrName: string) {
    return this.db
      .selectFrom('apps_apps')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)]))
      .executeTakeFirst();
  }
  appById(id: string) {
    return this.db.selectFrom('apps_apps').selectAll().where('id', '=', id).executeTakeFirst();
  }
  appByHost(hostLabel: string) {
    return this.db.selectFrom('apps_apps').selectAll().where('host_label', '=', hostLabel).executeTakeFirst();
  }
  allApps() {
    return this.db.selectFrom('apps_apps').selectAll().orderBy('created_at').execute();
  }
  appByName(customerId: string, name: string) {
    return this.db
      .selectFrom('apps_apps')
      .select('id')
      .where('customer_id', '=', customerId)
      .where('name', '=', name)
      .executeTakeFirst();
  }
  /** The lowest id slot no app holds (call under the `apps:id-slots` lock). */
  async freeIdSlot(): Promise<number> {
    const taken = await this.db
      .selectFrom('apps_apps')
      .select('id_slot')
      .where('id_slot', 'is not', null)
      .orderBy('id_slot')
      .execute();
    let slot = 0;
    for (const row of taken) {
      if (Number(row.id_slot) !== slot) break;
      slot++;
    }
    return slot;
  }
  async updateApp(id: string, patch: Partial<AppsAppsTable>) {
    await this.db.updateTable('apps_apps').set(patch).where('id', '=', id).execute();
  }
  async deleteApp(id: string) {
    await this.db.deleteFrom('apps_volumes').where('app_id', '=', id).execute();
    await this.db.deleteFrom('apps_domains').where('app_id', '=', id).execute();
    await this.db.deleteFrom('apps_revisions').where('app_id', '=', id).execute();
    await this.db.deleteFrom('apps_apps').where('id', '=', id).execute();
  }

  async insertRevision(row: AppsRevisionsTable) {
    await this.db.insertInto('apps_revisions').values(row).execute();
  }
  /** Newest first. */
  revisions(appId: string) {
    return this.db
      .selectFrom('apps_revisions')
      .selectAll()
      .where('app_id', '=', appId)
      .orderBy('number', 'desc')
      .execute();
  }
  revision(appId: string, id: string) {
    return this.db
      .selectFrom('apps_revisions')
      .selectAll()
      .where('app_id', '=', appId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  revisionByNumber(appId: string, n: number) {
    return this.db
      .selectFrom('apps_revisions')
      .selectAll()
      .where('app_id', '=', appId)
      .where('number', '=', n)
      .executeTakeFirst();
  }
  latestRevision(appId: string) {
    return this.db
      .selectFrom('apps_revisions')
      .selectAll()
      .where('app_id', '=', appId)
      .orderBy('number', 'desc')
      .limit(1)
      .executeTakeFirst();
  }
  async updateRevision(id: string, patch: Partial<AppsRevisionsTable>) {
    await this.db.updateTable('apps_revisions').set(patch).where('id', '=', id).execute();
  }
  async deleteRevisions(ids: string[]) {
    if (ids.length) await this.db.deleteFrom('apps_revisions').where('id', 'in', ids).execute();
  }

  // Image uploads
  async insertUpload(row: AppsImageUploadsTable) {
    await this.db.insertInto('apps_image_uploads').values(row).execute();
  }
  upload(customerId: string, id: string) {
    return this.db
      .selectFrom('apps_image_uploads')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  /** Uploads that count against the quota: uploaded ones, and those whose URL is still open. */
  async countLiveUploads(customerId: string, now: number): Promise<number> {
    const r = await this.db
      .selectFrom('apps_image_uploads')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('customer_id', '=', customerId)
      .where((eb) => eb.or([eb('status', '=', 'uploaded'), eb('expires_at', '>', now)]))
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }
  async updateUpload(id: string, patch: Partial<AppsImageUploadsTable>) {
    await this.db.updateTable('apps_image_uploads').set(patch).where('id', '=', id).execute();
  }
  async deleteUpload(id: string) {
    await this.db.deleteFrom('apps_image_uploads').where('id', '=', id).execute();
  }
  async countRevisionsOfUpload(uploadId: string): Promise<number> {
    const r = await this.db
      .selectFrom('apps_revisions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('image_upload_id', '=', uploadId)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  // Volumes
  async insertVolume(row: AppsVolumesTable) {
    await this.db.insertInto('apps_volumes').values(row).execute();
  }
  volumes(appId: string) {
    return this.db
      .selectFrom('apps_volumes')
      .selectAll()
      .where('app_id', '=', appId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  volume(appId: string, idOrName: string) {
    return this.db
      .selectFrom('apps_volumes')
      .selectAll()
      .where('app_id', '=', appId)
      .where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)]))
      .executeTakeFirst();
  }
  async countVolumes(customerId: string): Promise<number> {
    const r = await this.db
      .selectFrom('apps_volumes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }
  async deleteVolume(id: string) {
    await this.db.deleteFrom('apps_volumes').where('id', '=', id).execute();
  }
  async insertSnapshot(row: AppsVolumeSnapshotsTable) {
    await this.db.insertInto('apps_volume_snapshots').values(row).execute();
  }
  /** Newest first. */
  snapshots(volumeId: string) {
    return this.db
      .selectFrom('apps_volume_snapshots')
      .selectAll()
      .where('volume_id', '=', volumeId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  }
  snapshot(customerId: string, id: string) {
    return this.db
      .selectFrom('apps_volume_snapshots')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  async updateSnapshot(id: string, patch: Partial<AppsVolumeSnapshotsTable>) {
    await this.db.updateTable('apps_volume_snapshots').set(patch).where('id', '=', id).execute();
  }
  async deleteSnapshots(ids: string[]) {
    if (ids.length) await this.db.deleteFrom('apps_volume_snapshots').where('id', 'in', ids).execute();
  }

  // Custom domains
  async insertDomain(row: AppsDomainsTable) {
    await this.db.insertInto('apps_domains').values(row).execute();
  }
  domains(appId: string) {
    return this.db
      .selectFrom('apps_domains')
      .selectAll()
      .where('app_id', '=', appId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  domain(appId: string, idOrHost: string) {
    return this.db
      .selectFrom('apps_domains')
      .selectAll()
      .where('app_id', '=', appId)
      .where((eb) => eb.or([eb('id', '=', idOrHost), eb('host_name', '=', idOrHost)]))
      .executeTakeFirst();
  }
  domainByHost(hostName: string) {
    return this.db
      .selectFrom('apps_domains')
      .selectAll()
      .where('host_name', '=', hostName)
      .executeTakeFirst();
  }
  /** Issued certificates that expire before `before`. */
  domainsExpiringBefore(before: number) {
    return this.db
      .selectFrom('apps_domains')
      .selectAll()
      .where('certificate_status', '=', 'issued')
      .where('cert_expires_at', '<', before)
      .execute();
  }
  async updateDomain(id: string, patch: Partial<AppsDomainsTable>) {
    await this.db.updateTable('apps_domains').set(patch).where('id', '=', id).execute();
  }
  async deleteDomain(id: string) {
    await this.db.deleteFrom('apps_domains').where('id', '=', id).execute();
  }
  localCa() {
    return this.db.selectFrom('apps_local_ca').selectAll().where('id', '=', 'local').executeTakeFirst();
  }
  async insertLocalCa(certPem: string, keySealed: string, now: number) {
    await this.db
      .insertInto('apps_local_ca')
      .values({ id: 'local', cert_pem: certPem, key_sealed: keySealed, created_at: now })
      .execute();
  }

  /** Records a challenge; ones older than a day (an order cut off by a crash) go at the same time. */
  async putAcmeChallenge(token: string, keyAuthorization: string, now: number) {
    await this.db
      .deleteFrom('apps_acme_challenges')
      .where('created_at', '<', now - 86_400_000)
      .execute();
    await this.db
      .insertInto('apps_acme_challenges')
      .values({ token, key_authorization: keyAuthorization, created_at: now })
      .onConflict((oc) => oc.column('token').doUpdateSet({ key_authorization: keyAuthorization }))
      .execute();
  }
  async acmeChallenge(token: string) {
    const row = await this.db
      .selectFrom('apps_acme_challenges')
      .select('key_authorization')
      .where('token', '=', token)
      .executeTakeFirst();
    return row?.key_authorization ?? null;
  }
  async deleteAcmeChallenge(token: string) {
    await this.db.deleteFrom('apps_acme_challenges').where('token', '=', token).execute();
  }
}
